package repoconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func names(ps []Project) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestSelectProjects(t *testing.T) {
	cfg := &Config{Projects: []Project{{Name: "east", Dir: "live/east"}, {Name: "west", Dir: "live/west"}}}
	for _, tc := range []struct {
		name  string
		cfg   *Config
		files []string
		want  []string
	}{
		{"a file under one project", cfg, []string{"live/east/main.tf"}, []string{"east"}},
		{"a dir that only starts like a project's", cfg, []string{"live/eastern/main.tf"}, []string{}},
		{"a module no project calls changes none", cfg, []string{"modules/m/main.tf"}, []string{}},
		{"a readme outside changes none", cfg, []string{"README.md"}, []string{}},
		{"without projects, each dir with terraform files", &Config{}, []string{"b/x.tf", "a/v.tfvars", "a/y.tf.json", "c/notes.md"}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, names(SelectProjects(tc.cfg, Change{Files: tc.files})))
		})
	}
}

// A monorepo: app and api call modules/svc, which calls modules/net; batch
// calls modules/queue; tools calls nothing local.
func TestSelectFollowsLocalModules(t *testing.T) {
	calls := map[string][]string{
		"live/app":      {"modules/svc"},
		"live/api":      {"modules/svc", "modules/queue"},
		"live/batch":    {"modules/queue"},
		"modules/svc":   {"modules/net"},
		"modules/net":   {"modules/svc"}, // a cycle terminates
		"modules/queue": nil,
	}
	cfg := &Config{Projects: []Project{{Name: "app", Dir: "live/app"}, {Name: "api", Dir: "live/api"},
		{Name: "batch", Dir: "live/batch"}, {Name: "tools", Dir: "live/tools"}}}
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"modules/net/main.tf", []string{"app", "api"}},
		{"modules/svc/variables.tf", []string{"app", "api"}},
		{"modules/queue/main.tf", []string{"api", "batch"}},
		{"modules/unused/main.tf", []string{}},
		{"live/tools/main.tf", []string{"tools"}},
	} {
		got := SelectProjects(cfg, Change{Files: []string{tc.file}, Calls: func(d string) []string { return calls[d] }})
		require.Equal(t, tc.want, names(got), tc.file)
	}
}

func TestSelectNamedFilesOutsideTheDir(t *testing.T) {
	p := Project{Name: "prod", Dir: "stacks/app", VarFiles: []string{"../../env/prod.tfvars"}}
	p.InitArgs = []string{"-backend-config=../../env/prod.backend.hcl", "-backend-config=key=app.tfstate"}
	cfg := &Config{Projects: []Project{p, {Name: "dev", Dir: "stacks/app", VarFiles: []string{"../../env/dev.tfvars"}}}}
	require.Equal(t, []string{"prod"}, names(SelectProjects(cfg, Change{Files: []string{"env/prod.tfvars"}})))
	require.Equal(t, []string{"prod"}, names(SelectProjects(cfg, Change{Files: []string{"env/prod.backend.hcl"}})))
	require.Equal(t, []string{"dev"}, names(SelectProjects(cfg, Change{Files: []string{"env/dev.tfvars"}})))
	require.Equal(t, []string{"prod", "dev"}, names(SelectProjects(cfg, Change{Files: []string{"stacks/app/main.tf"}})))
}

func TestSelectWhenModified(t *testing.T) {
	p := Project{Name: "net", Dir: "network"}
	p.WhenModified = []string{"*.tf", "../modules/**/*.tf", "!../modules/**/test_*.tf", "../shared.auto.tfvars"}
	cfg := &Config{Projects: []Project{p}}
	for file, want := range map[string]bool{
		"network/main.tf":                true,
		"network/sub/main.tf":            false, // * stays in one segment
		"network/README.md":              false, // when_modified replaces the default
		"modules/a/b/main.tf":            true,
		"modules/main.tf":                true, // ** matches no segment
		"modules/a/test_main.tf":         false,
		"shared.auto.tfvars":             true,
		"networking/main.tf":             false,
		"other/modules/anything/main.tf": false,
	} {
		got := SelectProjects(cfg, Change{Files: []string{file}, Calls: func(string) []string { return nil }})
		require.Equal(t, want, len(got) == 1, file)
	}
}

func TestSelectBranches(t *testing.T) {
	rel := Project{Name: "rel", Dir: "rel"}
	rel.Branches = []string{"release/*", "main"}
	cfg := &Config{Projects: []Project{{Name: "plain", Dir: "plain"}, rel}}
	files := []string{"plain/main.tf", "rel/main.tf"}
	sel := func(base string) []string {
		return names(SelectProjects(cfg, Change{Files: files, Base: base, DefaultBranch: "main"}))
	}
	require.Equal(t, []string{"plain", "rel"}, sel("main"))
	require.Equal(t, []string{"rel"}, sel("release/2.0"), "without branches: the default branch only")
	require.Equal(t, []string{}, sel("feature/x"))
}
