package bot

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/streamroot"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// openPRWithLinks opens a pull request whose branch adds files and symlinks
// (path -> target, as written).
func (h *harness) openPRWithLinks(branch string, files, links map[string]string) githubtest.PullRequest {
	h.t.Helper()
	h.repo.Checkout("main")
	h.repo.Branch(branch)
	for name, content := range files {
		h.repo.WriteFile(name, content)
	}
	for name, target := range links {
		h.repo.Symlink(name, target)
	}
	h.repo.Commit("links on " + branch)
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: branch, User: author})
	h.run("pull_request", githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, repoName, pr.Number)))
	return pr
}

// Symlinks in a repository, through the service with real terraform: links
// that stay inside the checkout work as in a git clone (the project reads a
// file through one); a link that leads out is not made and the plan names it,
// and only a project that needs such a link fails, saying which.
func TestSymlinksInTheCheckout(t *testing.T) {
	h := newHarness(t)

	// The project's main.tf becomes a link to a scaled-up copy elsewhere.
	h.repo.Checkout("main")
	h.repo.RemoveFile("streams/main.tf")
	h.repo.Commit("main.tf moves")
	pr := h.openPRWithLinks("links", map[string]string{
		"README.md":      "# streams\n",
		"shared/main.tf": streamroot.MainTF(h.state, h.simURL, with(baseGroups, map[string]int{"payments/ledger": 3})),
	}, map[string]string{
		"docs/readme":     "../README.md",      // harmless, inside
		"streams/main.tf": "../shared/main.tf", // read by the project, inside
		"docs/escape":     "../../outside",     // leads out: not made
	})
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	body := h.theComment(pr)
	require.Contains(t, body, "| `payments` | `ledger` | scale | 2 → 3 |", "terraform read the project's main.tf through the in-tree link")
	require.Contains(t, body, "checkout.symlink")
	require.Contains(t, body, "docs/escape")
	require.NotContains(t, body, "docs/readme", "links inside the checkout are not worth a word")
	check := h.check(prreport.CheckPlanPrefix+"streams", head)
	require.Equal(t, "completed", check.Status)
	require.NotContains(t, check.Summary, "could not be fetched")

	pr = h.openPRWithLinks("needed-link", nil, map[string]string{"streams/escape.tf": "/etc/hostname"})
	head = h.gh.PR(owner, repoName, pr.Number).HeadSHA
	body = h.theComment(pr)
	require.Contains(t, body, "the project needs a symlink shardgate does not follow")
	require.Contains(t, body, "streams/escape.tf")
	check = h.check(prreport.CheckPlanPrefix+"streams", head)
	require.Equal(t, "failure", check.Conclusion)
	require.Contains(t, check.Summary, "streams/escape.tf")
}
