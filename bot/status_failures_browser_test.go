package bot

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/testing/browsertest"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
)

// Issue 24's bad day, through the service with real terraform and in a
// browser: a pull request planned, then GitHub answers 500 to everything.
// The next job fails and waits for its retry, the drift check of the
// repository fails; the status page says so (banner, the job with its
// attempt, next try and error, GitHub unreachable, the failed drift check)
// and the metrics count both failures.
func TestStatusPageShowsWhatFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bctx := browsertest.New(t, ctx)
	h := newHarnessBase(t)
	h.cfg.Status = serverconfig.StatusConfig{Listen: "127.0.0.1:0"}
	h.opts = append(h.opts, WithGitHubTransport(&ghapp.RetryTransport{Next: http.DefaultTransport, Attempts: 2, Base: 10 * time.Millisecond,
		MaxWait: time.Second, Timeout: time.Second}))
	h.tune = func(s *Server) {
		// The retry waits long enough to be seen waiting.
		s.dispatcher.RetryBase, s.dispatcher.RetryMax = time.Hour, time.Hour
	}
	st, err := store.OpenBolt(h.cfg.StorePath, store.WithClock(h.clock.Now)) // the retry is due on the service's clock
	require.NoError(t, err)
	h.st = st
	h.start()
	stop, err := h.srv.startStatus()
	require.NoError(t, err)
	t.Cleanup(stop)

	pr := h.openPR("scale-ledger", with(baseGroups, map[string]int{"payments/ledger": 3}))
	require.Contains(t, h.theComment(pr), "| `payments` | `ledger` | scale | 2 → 3 |", "planned by terraform while GitHub answered")

	h.gh.Inject(githubtest.Fault{Status: http.StatusInternalServerError, Times: 1 << 20})
	before := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	h.repo.Checkout(pr.HeadRef)
	h.writeRoot(with(baseGroups, map[string]int{"payments/ledger": 4}))
	h.repo.Commit("scale further")
	h.gh.SyncPR(owner, repoName, pr.Number)
	code, r := h.deliver("pull_request", githubtest.PullRequestSynchronize(t, h.gh.PRPayload(owner, repoName, pr.Number), before))
	require.Equal(t, http.StatusAccepted, code, r.Reason)
	require.Eventually(t, func() bool {
		j, err := h.srv.store.GetJob(ctx, r.JobID)
		return err == nil && j.State == store.JobQueued && j.LastError != ""
	}, time.Minute, 20*time.Millisecond, "the job failed and waits for its retry")

	repo, err := h.srv.drift.store.Repo(ctx, owner, repoName)
	require.NoError(t, err)
	require.NotNil(t, repo, "the pull request's events made the repository known")
	_, err = h.srv.drift.CheckRepo(ctx, *repo)
	require.ErrorContains(t, err, "500")

	require.EqualValues(t, 1, value(t, h.srv.registry, "shardgate_job_failures_total", "pull_request", "retried"))
	require.EqualValues(t, 0, value(t, h.srv.registry, "shardgate_job_failures_total", "pull_request", "failed"))
	require.EqualValues(t, 1, value(t, h.srv.registry, "shardgate_drift_checks_total", "error"))

	texts := func(sel string) []string {
		t.Helper()
		got, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+"`"+sel+"`"+`)].map(e => e.textContent)`))
		require.NoError(t, err)
		return got
	}
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate("http://"+h.srv.statusAddr+"/"), chromedp.WaitVisible(chromedp.CSS(`.banner`))))
	banner := strings.Join(texts(".banner"), "")
	require.Contains(t, banner, "Something is failing: 1 webhook job failing and to be tried again")
	require.Regexp(t, `GitHub unreachable since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(answered 500 Internal Server Error\)`, banner)
	require.Contains(t, banner, "1 drift check failed (see Drift)")

	jobs := texts("tr.failing-job")
	require.Len(t, jobs, 1)
	require.Regexp(t, `^job \d+pull_requestacme/streams#1\s*retrying1\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`+
		`edit comment on acme/streams#1: PATCH http://127\.0\.0\.1:\d+/repos/acme/streams/issues/comments/\d+: 500 Internal Server Error`, jobs[0],
		"event, pull request, state, attempt, next try and error")
	services := strings.Join(texts("tr.service"), "\n")
	require.Contains(t, services, "GitHubunreachable")
	require.Contains(t, services, "reachable", "the coordinator the plan read answered")
	drifts := texts("tr.drift-row td.drift-status")
	require.Len(t, drifts, 1)
	require.Regexp(t, `^error: read the head of main on acme/streams: GET \S+: 500 Internal Server Error`, drifts[0])
	require.Contains(t, strings.Join(texts("table.plans td"), " "), "streams", "the plan made before the outage is listed")
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(t.ArtifactDir(), "status-page-failing.png"), png, 0o644))
}
