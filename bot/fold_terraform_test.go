package bot

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// foldingMonorepo starts a server whose report.max_project_checks is 3
// on a monorepo of 5 projects, and opens (not delivered) a pull request
// that changes their shared module and breaks p04 (it is not planned, and
// says so). It returns the projects' names.
func foldingMonorepo(h *harness) ([]string, githubtest.PullRequest) {
	h.t.Helper()
	h.cfg.MaxProjectChecks = 3
	names := writeMonorepo(h, 5)
	h.start()
	pr := openSharedModulePR(h, "shared-v2")
	h.repo.WriteFile("projects/p04/main.tf", "this is not HCL {")
	h.repo.Commit("break p04")
	pr.HeadSHA = h.gh.SyncPR(owner, repoName, pr.Number)
	return names, pr
}

// requireFolded checks the aggregate check run on sha of foldingMonorepo's
// change: a row for each project, p04's findings in its text and an
// annotation on its directory; no project has a check run of its own on
// sha, and each was planned once.
func requireFolded(t *testing.T, h *harness, sha string, names []string) {
	t.Helper()
	gate := h.check(prreport.CheckGateName, sha)
	require.Equal(t, "completed", gate.Status)
	require.Equal(t, "failure", gate.Conclusion, "p04 was not planned")
	for _, n := range names {
		require.Contains(t, gate.Summary, "| `"+n+"` |")
	}
	require.Contains(t, gate.Summary, "| `p00` | ✅ allowed |")
	require.Contains(t, gate.Summary, "| `p04` | ❌ not planned |")
	require.Contains(t, gate.Text, "`p04`", "the findings of the project not allowed")
	require.Len(t, gate.Annotations, 1)
	require.Contains(t, gate.Annotations[0], "failure projects/p04: ❌ not planned")
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		require.False(t, c.HeadSHA == sha && strings.HasPrefix(c.Name, prreport.CheckPlanPrefix), "a project's own check run: %s", c.Name)
	}
	planned := histCount(t, h.srv.registry, "shardgate_plan_duration_seconds", "planned") + histCount(t, h.srv.registry, "shardgate_plan_duration_seconds", "error")
	require.Equal(t, uint64(len(names)), planned, "each project planned once")
}

// checkRunWrites counts the check-run creates and edits among requests.
func checkRunWrites(requests []githubtest.Recorded) (creates, edits int) {
	for _, q := range requests {
		switch {
		case q.Method == http.MethodPost && strings.HasSuffix(q.Path, "/check-runs"):
			creates++
		case q.Method == http.MethodPatch && strings.Contains(q.Path, "/check-runs/"):
			edits++
		}
	}
	return creates, edits
}

// A pull request that plans more projects than report.max_project_checks
// gives none of them a check run: their results are rows of the aggregate
// `shardgate` check run (one not planned is an annotation too), the comment
// says so and names every project, each project is planned once, and the
// job's content writes do not grow with the projects.
func TestManyProjectsFoldIntoTheAggregateCheck(t *testing.T) {
	h := newHarnessBase(t)
	names, pr := foldingMonorepo(h)
	before := len(h.gh.Requests())
	h.run("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))

	comment := h.eventuallyComment(pr, "done: planned 5 projects")
	require.Contains(t, comment, prreport.FoldNotice(5, 3))
	for _, n := range names {
		require.Contains(t, comment, "`"+n+"`")
	}
	requireFolded(t, h, pr.HeadSHA, names)
	creates, edits := checkRunWrites(h.gh.Requests()[before:])
	require.Equal(t, 1, creates, "the aggregate check run only")
	require.Equal(t, 1, edits, "the aggregate check run, completed once")
}
