package bot

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// outageHarness is the harness with GitHub calls that give up and retry
// quickly: an attempt's deadline of 1s, job retries after 50ms to 200ms.
func outageHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarnessBase(t)
	h.opts = append(h.opts, WithGitHubTransport(&ghapp.RetryTransport{Next: http.DefaultTransport, Attempts: 3, Base: 10 * time.Millisecond,
		MaxWait: time.Second, Timeout: time.Second}))
	h.tune = func(s *Server) {
		s.dispatcher.RetryBase, s.dispatcher.RetryMax = 50*time.Millisecond, 200*time.Millisecond
	}
	h.start()
	return h
}

var (
	commentsPath  = "/repos/{owner}/{repo}/issues/{issue_number}/comments"
	checkRunsPath = "/repos/{owner}/{repo}/check-runs"
	reactionsPath = "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
)

// outages are GitHub failing while a plan runs: faults of both flows, and
// those of the creations only opening a pull request (its comment) or only a
// command (its reaction) makes.
var outages = []struct {
	name                  string
	faults, open, command []githubtest.Fault
}{
	{name: "502 on eight calls in a row", faults: []githubtest.Fault{{Times: 8}}},
	{name: "creations done but answered 502", faults: []githubtest.Fault{
		{Method: "POST", Pattern: checkRunsPath, After: true},
		{Times: 3},
	}, open: []githubtest.Fault{{Method: "POST", Pattern: commentsPath, After: true}},
		command: []githubtest.Fault{{Method: "POST", Pattern: reactionsPath, After: true}}},
	{name: "connection resets", faults: []githubtest.Fault{
		{Method: "POST", Pattern: checkRunsPath, Reset: true, After: true},
		{Reset: true, Times: 4},
	}, open: []githubtest.Fault{{Method: "POST", Pattern: commentsPath, Reset: true, After: true}},
		command: []githubtest.Fault{{Method: "POST", Pattern: reactionsPath, Reset: true, Times: 2}}},
	{name: "a call that never answers", faults: []githubtest.Fault{
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/pulls/{pull_number}/files", Hang: true},
		{Method: "PATCH", Pattern: "/repos/{owner}/{repo}/check-runs/{check_run_id}", Hang: true},
	}, command: []githubtest.Fault{{Method: "POST", Pattern: reactionsPath, Hang: true}}},
}

func inject(h *harness, lists ...[]githubtest.Fault) {
	for _, l := range lists {
		for _, f := range l {
			h.gh.Inject(f)
		}
	}
}

// requireOnePlanRun says the PR has one shardgate comment and, on its head,
// runs check runs of the project, all completed: none created twice.
func requireOnePlanRun(t *testing.T, h *harness, pr githubtest.PullRequest, runs int) string {
	t.Helper()
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	var found, gates []githubtest.CheckRun
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		if c.HeadSHA != head {
			continue
		}
		require.Equal(t, "completed", c.Status, "no check run is left in progress: %+v", c)
		if c.Name == prreport.CheckGateName {
			gates = append(gates, c)
			continue
		}
		require.Equal(t, prreport.CheckPlanPrefix+"streams", c.Name)
		found = append(found, c)
	}
	require.Len(t, found, runs, "one check run per plan: %+v", found)
	require.Len(t, gates, runs, "one aggregate check run per plan: %+v", gates)
	require.Zero(t, h.gh.PendingFaults(), "every fault fired")
	return h.theComment(pr)
}

// GitHub failing during the plan of a newly opened pull request (502s, lost
// answers to creations, resets, a call that hangs) delays the job; once
// GitHub recovers it completes once: one comment, one check run.
func TestGitHubOutageDuringPlanCompletesOnce(t *testing.T) {
	for _, tt := range outages {
		t.Run(tt.name, func(t *testing.T) {
			h := outageHarness(t)
			h.repo.Checkout("main")
			h.repo.Branch("scale")
			h.writeRoot(with(baseGroups, map[string]int{"payments/ledger": 3}))
			h.repo.Commit("scale payments")
			pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "scale", User: author})
			inject(h, tt.faults, tt.open)
			h.run("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))

			body := requireOnePlanRun(t, h, pr, 1)
			require.Contains(t, body, "done: planned 1 project")
			require.Contains(t, body, "`payments`")
		})
	}
}

// The same outages during a `/shardgate plan` command: the command is
// acknowledged once and re-plans once.
func TestGitHubOutageDuringPlanCommandCompletesOnce(t *testing.T) {
	for _, tt := range outages {
		t.Run(tt.name, func(t *testing.T) {
			h := outageHarness(t)
			pr := h.openPR("scale", with(baseGroups, map[string]int{"payments/ledger": 3}))
			requireOnePlanRun(t, h, pr, 1)
			inject(h, tt.faults, tt.command)
			c := h.comment(pr, author, "/shardgate plan")

			body := requireOnePlanRun(t, h, pr, 2)
			require.Contains(t, body, "done: planned 1 project")
			reactions := h.gh.Reactions(owner, repoName, c.ID)
			require.Len(t, reactions, 1, "acknowledged once: %+v", reactions)
			require.Equal(t, "+1", reactions[0].Content)
			require.Len(t, h.gh.Comments(owner, repoName, pr.Number), 2, "the command and shardgate's comment, nothing more")
		})
	}
}
