package githubtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMergedPullRequest(t *testing.T) {
	gh := New(t)
	g, pr := newRepoWithPR(t, gh)
	g.Checkout("main")
	sha := g.Merge("change", "Merge pull request #1 from acme/change")
	gh.MergePR("acme", "infra", pr.Number, "carol", sha)

	got, _, err := newClient(t, gh, DefaultInstallationID).PullRequests.Get(context.Background(), "acme", "infra", pr.Number)
	require.NoError(t, err)
	require.Equal(t, "closed", got.GetState())
	require.True(t, got.GetMerged())
	require.Equal(t, sha, got.GetMergeCommitSHA())
	require.Equal(t, "carol", got.GetMergedBy().GetLogin())
	require.NotNil(t, got.MergedAt)

	parents, err := g.run(nil, "rev-list", "--parents", "-n", "1", sha)
	require.NoError(t, err)
	require.Len(t, strings.Fields(parents), 3, "a merge commit has two parents")
	head, err := g.Resolve("change")
	require.NoError(t, err)
	require.Contains(t, parents, head)
}

// programTB is TB without the testing package, as a program would bring it.
type programTB struct {
	dirs     []string
	cleanups []func()
	errors   []string
}

func (p *programTB) Helper()             {}
func (p *programTB) Logf(string, ...any) {}
func (p *programTB) Errorf(format string, args ...any) {
	p.errors = append(p.errors, fmt.Sprintf(format, args...))
}
func (p *programTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (p *programTB) Cleanup(f func())                  { p.cleanups = append(p.cleanups, f) }
func (p *programTB) TempDir() string {
	d, err := os.MkdirTemp("", "githubtest-program")
	if err != nil {
		panic(err)
	}
	p.dirs = append(p.dirs, d)
	return d
}

func (p *programTB) close() {
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
	for _, d := range p.dirs {
		_ = os.RemoveAll(d)
	}
}

// The fake runs outside a test: a program's TB gets its cleanups and the
// fake's reports.
func TestDrivenByAProgram(t *testing.T) {
	p := &programTB{}
	defer p.close()
	gh := New(p)
	g := NewGitRepo(p)
	g.WriteFile("main.tf", "\n")
	g.Commit("base")
	g.Branch("change")
	g.WriteFile("main.tf", "# change\n")
	g.Commit("change")
	gh.AddRepo("acme", "infra", g)
	pr := gh.OpenPR("acme", "infra", PullRequest{User: "alice", HeadRef: "change"})
	require.Len(t, p.cleanups, 1, "the server registered its close")
	require.Len(t, p.dirs, 1)

	client := newClient(t, gh, DefaultInstallationID)
	_, _, err := client.PullRequests.Get(context.Background(), "acme", "infra", pr.Number)
	require.NoError(t, err)
	require.Empty(t, p.errors)
	_, err = client.Client().Get(gh.URL() + "repos/acme/infra/nope")
	require.NoError(t, err)
	require.NotEmpty(t, p.errors, "a request outside the spec is reported to the program")
	require.Contains(t, string(PullRequestOpened(p, gh.PRPayload("acme", "infra", pr.Number))), pr.HeadSHA)
}
