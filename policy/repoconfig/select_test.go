package repoconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSelectProjects(t *testing.T) {
	cfg := &Config{Projects: []Project{{Name: "east", Dir: "live/east"}, {Name: "west", Dir: "live/west"}}}
	names := func(ps []Project) []string {
		out := []string{}
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		cfg   *Config
		files []string
		want  []string
	}{
		{"a file under one project", cfg, []string{"live/east/main.tf"}, []string{"east"}},
		{"a dir that only starts like a project's", cfg, []string{"live/eastern/main.tf"}, []string{"east", "west"}},
		{"a shared module changes every project", cfg, []string{"modules/m/main.tf"}, []string{"east", "west"}},
		{"a readme outside changes none", cfg, []string{"README.md"}, []string{}},
		{"without projects, each dir with terraform files", &Config{}, []string{"b/x.tf", "a/v.tfvars", "a/y.tf.json", "c/notes.md"}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, names(SelectProjects(tc.cfg, tc.files)))
		})
	}
}
