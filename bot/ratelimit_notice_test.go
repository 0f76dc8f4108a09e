package bot

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
)

// waitNotice is the comment's status while a job of its pull request waits
// for one of GitHub's limits.
var waitNotice = regexp.MustCompile(`⏳ waiting for GitHub's rate limit \((primary|secondary)\), resets at \d\d:\d\d UTC`)

// A job that meets a limit GitHub then lets the comment's edit through says
// so on the comment (here a secondary limit answered without Retry-After:
// shardgate waits a minute, on the service's clock); once the wait is over
// the job's result replaces it.
func TestAJobWaitingForALimitSaysSoOnTheComment(t *testing.T) {
	if testing.Short() {
		t.Skip("terraform")
	}
	h := newHarnessBase(t)
	st, err := store.OpenBolt(h.cfg.StorePath, store.WithClock(h.clock.Now)) // the job's wait ends by the clock
	require.NoError(t, err)
	h.st = st
	h.start()
	pr := h.openPR("limited", with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))

	h.gh.FailNext("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", 403, nil)
	c := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate plan")
	code, r := h.deliver("issue_comment", githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{
		InstallationID: 1, Owner: owner, Repo: repoName, RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number,
		Author: author, CommentID: c.ID, Body: c.Body, User: approver}))
	require.Equal(t, 202, code, r.Reason)

	body := h.eventuallyComment(pr, "⏳ waiting for GitHub's rate limit (secondary), resets at ")
	require.Regexp(t, waitNotice, body)
	require.Contains(t, h.logs.String(), `"limit":"github secondary rate limit"`)
	job, err := h.st.GetJob(context.Background(), r.JobID)
	require.NoError(t, err)
	require.Equal(t, store.JobQueued, job.State, "the job waits")

	h.clock.Advance(time.Minute)
	h.waitJob(r.JobID)
	body = h.eventuallyComment(pr, "done: planned")
	require.NotRegexp(t, waitNotice, body)
}
