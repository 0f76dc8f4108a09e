package bot

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/terraform/runner"
	"github.com/shardgate/shardgate/terraform/workdir"
)

// A plan job that fails for good while GitHub refuses to complete its check
// run leaves the run in progress; the next start, finding the job over,
// completes it as failed and says how to plan again.
func TestStartFinishesACheckRunWhoseJobIsGone(t *testing.T) {
	h := newHarnessBase(t)
	h.opts = append(h.opts, WithGitHubTransport(&ghapp.RetryTransport{Next: httpTransport(), Attempts: 3, Base: 10 * time.Millisecond,
		MaxWait: time.Second, Timeout: 5 * time.Second}))
	h.tune = func(s *Server) { s.dispatcher.Attempts = 1 }
	h.start()
	h.repo.Checkout("main")
	h.repo.Branch("scale")
	h.writeRoot(with(baseGroups, map[string]int{"payments/ledger": 3}))
	h.repo.Commit("scale payments")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "scale", User: author})
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	// Completing the check run fails for the plan and for the failure report.
	h.gh.Inject(githubtest.Fault{Method: "PATCH", Pattern: "/repos/{owner}/{repo}/check-runs/{check_run_id}", Times: 6})
	code, r := h.deliver("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))
	require.Equal(t, 202, code)
	require.Eventually(t, func() bool {
		job, err := h.st.GetJob(context.Background(), r.JobID)
		return err == nil && job.State == store.JobFailed
	}, time.Minute, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		return value(t, h.srv.registry, "shardgate_job_failures_total", "pull_request", "failed") == 1
	}, time.Minute, 20*time.Millisecond, "the failure is counted")
	h.stop()
	run := h.check(prreport.CheckPlanPrefix+"streams", head)
	require.Equal(t, "in_progress", run.Status, "GitHub never heard the plan finish")

	h.start()
	require.Eventually(t, func() bool { return h.check(prreport.CheckPlanPrefix+"streams", head).Status == "completed" }, time.Minute, 20*time.Millisecond)
	run = h.check(prreport.CheckPlanPrefix+"streams", head)
	require.Equal(t, "failure", run.Conclusion)
	require.Equal(t, restartedTitle, run.Title)
	require.Contains(t, run.Summary, "`/shardgate plan`")
	require.Equal(t, "failure", h.check(prreport.CheckGateName, head).Conclusion, "the aggregate check finished too")
	require.Equal(t, map[string]int{prreport.CheckPlanPrefix + "streams": 1, prreport.CheckGateName: 1}, checkRunNames(h), "finished, not replaced")
	// The record of the open run goes right after GitHub heard it finish.
	require.Eventually(t, func() bool {
		kvs, err := h.st.List(context.Background(), prreport.BucketChecks, "")
		return err == nil && len(kvs) == 0
	}, time.Minute, 20*time.Millisecond, "nothing is left to finish")
}

// Start removes what a dead process left in the work dir — its run dir with
// a checkout and terraform scratch (variable file with the coordinator
// password), and checkouts of older versions — and keeps a live process's.
// The server's own checkouts and scratch live in its run dir, removed by Close.
func TestStartSweepsTheWorkDir(t *testing.T) {
	work := t.TempDir()
	dead := filepath.Join(work, "run-dead")
	require.NoError(t, os.MkdirAll(filepath.Join(dead, "checkout-1", "streams"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(dead, "shardgate-job-1"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dead, "shardgate-job-1", "sensitive.tfvars.json"), []byte(`{"coordinator_password":"pw"}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dead, workdir.LockName), nil, 0o600))
	legacy := filepath.Join(work, "checkout-123")
	require.NoError(t, os.MkdirAll(legacy, 0o700))
	live, err := workdir.Open(work) // another process, alive
	require.NoError(t, err)
	defer func() { require.NoError(t, live.Close()) }()
	other := filepath.Join(work, "notes")
	require.NoError(t, os.MkdirAll(other, 0o700))

	g := newGitHubServerIn(t, "coordinator-password", work)
	require.NoError(t, g.srv.Start(context.Background()))
	for _, gone := range []string{dead, legacy} {
		_, err := os.Stat(gone)
		require.ErrorIs(t, err, os.ErrNotExist, gone)
	}
	for _, kept := range []string{live.Path(), other, g.srv.workDir} {
		_, err := os.Stat(kept)
		require.NoError(t, err, kept)
	}
	require.True(t, strings.HasPrefix(g.srv.workDir, filepath.Join(work, workdir.RunPrefix)))
	fi, err := os.Stat(g.srv.workDir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	job, err := g.srv.runner.NewJob(runner.JobConfig{Dir: t.TempDir()})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(job.PlanFile(), g.srv.workDir+string(filepath.Separator)), "terraform scratch is in the run dir: %s", job.PlanFile())
	require.NoError(t, job.Close())

	g.srv.Close(context.Background())
	_, err = os.Stat(g.srv.workDir)
	require.ErrorIs(t, err, os.ErrNotExist, "Close removes the run dir")
	_, err = os.Stat(live.Path())
	require.NoError(t, err)
}

func httpTransport() *http.Transport { return http.DefaultTransport.(*http.Transport).Clone() }
