package plan

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/policy/repoconfig"
)

// A left-out symlink fails only the project that reads it: a file terraform
// loads from the project's own directory, or one of its var files.
func TestLinksNeeded(t *testing.T) {
	project := repoconfig.Project{Name: "prod", Dir: "env/prod", VarFiles: []string{"../common.tfvars", "prod.tfvars"}}
	root := repoconfig.Project{Name: "root", Dir: "."}
	for _, tt := range []struct {
		link string
		p    repoconfig.Project
		need bool
	}{
		{"env/prod/main.tf", project, true},
		{"env/prod/vars.tf.json", project, true},
		{"env/prod/main.tofu", project, true},
		{"env/prod/.terraform.lock.hcl", project, true},
		{"env/common.tfvars", project, true},
		{"env/prod/prod.tfvars", project, true},
		{"env/prod/README.md", project, false},
		{"env/prod/modules/x.tf", project, false},
		{"env/staging/main.tf", project, false},
		{"docs-link", root, false},
		{"main.tf", root, true},
		{"docs/main.tf", root, false},
	} {
		got := linksNeeded([]ghapp.SkippedLink{{Name: tt.link, Target: "/etc/x", Reason: "escapes the checkout"}}, tt.p)
		require.Equal(t, tt.need, len(got) == 1, "%s in project %s", tt.link, tt.p.Name)
	}
}
