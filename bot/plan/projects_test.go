package plan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/policy/repopolicy"
)

const (
	baseSHA     = "3333333333333333333333333333333333333333"
	twoProjects = "version: 1\nprojects:\n  - name: streams\n    dir: streams\n  - name: billing\n    dir: infra/billing\n"
)

// selection is the project selection of the plan flow, through the seams:
// the repository's policy read from the base commit, then the pull request's
// changed files (read page by page) matched against it.
func selection(t *testing.T, gh *ghapptest.GitHub, changed ...string) ([]string, error) {
	return selectionIn(t, gh, nil, changed...)
}

// selectionIn is selection with the head's files (for its module graph).
func selectionIn(t *testing.T, gh *ghapptest.GitHub, head map[string]string, changed ...string) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	pr := ghapp.PullRequest{Number: seamRef.Number, State: "open", BaseRef: "main", DefaultBranch: "main", BaseSHA: baseSHA, HeadSHA: pushedHead}
	gh.SetPullRequest(seamRef.Owner, seamRef.Repo, pr, changed...)
	pol, err := repopolicy.NewLoader(policy.DefaultConfig(), false, nil, nil).For(ctx, gh, seamRef, "main", baseSHA)
	if err != nil {
		return nil, err
	}
	root := t.TempDir()
	for name, text := range head {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	projects, err := projectsOf(ctx, gh, seamRef, pr, pol.Repo, func() string { return root })
	require.NoError(t, err)
	var names []string
	for _, p := range projects {
		names = append(names, p.Name+"="+p.Dir)
	}
	return names, nil
}

func TestProjectSelection(t *testing.T) {
	tests := []struct {
		name    string
		config  string // .shardgate.yaml on the base commit; "" for none
		head    map[string]string
		changed []string
		want    []string
	}{
		{name: "no configuration: every dir with a changed Terraform file, sorted",
			changed: []string{"streams/main.tf", "docs/README.md", "a/vars.tfvars", "b/c/main.tf.json", "streams/other.tf", "README.md"},
			want:    []string{"a=a", "b/c=b/c", "streams=streams"}},
		{name: "no configuration, nothing Terraform", changed: []string{"docs/README.md"}},
		{name: "a renamed file counts under its old path too",
			changed: []string{"docs/moved.md", "old/main.tf"}, want: []string{"old=old"}},
		{name: "configured: the projects whose dir holds a changed file", config: twoProjects,
			changed: []string{"infra/billing/main.tf", "docs/README.md", "streams-notes/x.tf.md"},
			want:    []string{"billing=infra/billing"}},
		{name: "configured: any changed file in a project's dir, not only Terraform", config: twoProjects,
			changed: []string{"streams/README.md"}, want: []string{"streams=streams"}},
		{name: "configured: a module only streams calls plans streams", config: twoProjects,
			head:    map[string]string{"streams/main.tf": "module \"g\" {\n  source = \"../modules/group\"\n}\n"},
			changed: []string{"modules/group/main.tf"}, want: []string{"streams=streams"}},
		{name: "configured: a module called through another module plans its caller", config: twoProjects,
			head: map[string]string{"infra/billing/main.tf": "module \"w\" {\n  source = \"../../modules/wrap\"\n}\n",
				"modules/wrap/main.tf": "module \"g\" {\n  source = \"../group\"\n}\n"},
			changed: []string{"modules/group/main.tf"}, want: []string{"billing=infra/billing"}},
		{name: "configured: a Terraform file no project reads plans nothing", config: twoProjects,
			changed: []string{"modules/group/main.tf"}},
		{name: "configured: nothing in a project", config: twoProjects, changed: []string{"docs/README.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, gh, _ := seamPlanner(t, nil)
			gh.PerPage = 2 // the changed files come on several pages
			if tt.config != "" {
				gh.SetFile(seamRef.Owner, seamRef.Repo, baseSHA, repoconfig.FileName, []byte(tt.config))
			}
			// The pull request's own .shardgate.yaml is never read.
			gh.SetFile(seamRef.Owner, seamRef.Repo, pushedHead, repoconfig.FileName, []byte("version: 1\nprojects:\n  - name: everything\n    dir: .\n"))
			got, err := selectionIn(t, gh, tt.head, tt.changed...)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// A bad .shardgate.yaml on the base branch is a configuration error (shown on
// the pull request); GitHub failing is not.
func TestProjectSelectionConfigErrors(t *testing.T) {
	_, gh, _ := seamPlanner(t, nil)
	gh.SetFile(seamRef.Owner, seamRef.Repo, baseSHA, repoconfig.FileName, []byte("version: 1\nprojects:\n  - name: streams\n    dri: streams\n"))
	_, err := selection(t, gh, "streams/main.tf")
	var cfgErr *repoconfig.Error
	require.ErrorAs(t, err, &cfgErr)

	outage := errors.New("502 from GitHub")
	gh.Fail = func(call string) error {
		if call == "GetFile" {
			return outage
		}
		return nil
	}
	_, err = selection(t, gh, "streams/main.tf")
	require.ErrorIs(t, err, outage)
	require.False(t, errors.As(err, &cfgErr), "an outage is not the repository's fault")
}

// When the head cannot be fetched, the projects its module graph might add
// are planned (their plans say the files are missing), not silently skipped.
func TestProjectSelectionWithoutTheHead(t *testing.T) {
	_, gh, _ := seamPlanner(t, nil)
	gh.SetFile(seamRef.Owner, seamRef.Repo, baseSHA, repoconfig.FileName, []byte(twoProjects))
	ctx := context.Background()
	pr := ghapp.PullRequest{Number: seamRef.Number, State: "open", BaseRef: "main", DefaultBranch: "main", BaseSHA: baseSHA, HeadSHA: pushedHead}
	gh.SetPullRequest(seamRef.Owner, seamRef.Repo, pr, "modules/group/main.tf")
	pol, err := repopolicy.NewLoader(policy.DefaultConfig(), false, nil, nil).For(ctx, gh, seamRef, "main", baseSHA)
	require.NoError(t, err)
	projects, err := projectsOf(ctx, gh, seamRef, pr, pol.Repo, func() string { return "" })
	require.NoError(t, err)
	require.Len(t, projects, 2)
}
