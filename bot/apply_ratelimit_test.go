package bot

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/apply"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// An apply that did its coordinator work and then meets GitHub's rate limit
// while reporting is neither failed nor run again: its report waits in the
// queue (postponed, not failed) and is made once GitHub allows.
func TestAnApplyThatMeetsGitHubsLimitReportsWhenGitHubAllows(t *testing.T) {
	if testing.Short() {
		t.Skip("terraform")
	}
	h := newHarness(t)
	pr := allowedScale(h, "scale-up")
	// GitHub answers the completion of the apply's check run with its
	// secondary limit: nothing more may be sent for 2 s.
	h.gh.FailNext("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", 403, map[string]string{"retry-after": "2"})
	mergeSHA := h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Equal(t, 1, jobs[0].Attempt)

	name := prreport.CheckApplyPrefix + "streams"
	require.Eventually(t, func() bool {
		for _, c := range h.gh.CheckRuns(owner, repoName) {
			if c.Name == name && c.HeadSHA == mergeSHA && c.Conclusion == "success" {
				return true
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "the apply's check run is completed once GitHub allows")
	require.Zero(t, h.gh.PendingFaults(), "the limit was met")
	h.eventuallyComment(pr, "✅ applied")
	require.Contains(t, h.logs.String(), "apply outcome not reported: GitHub's rate limit")

	// The coordinator work ran once, and one audit record says so.
	scales := 0
	for _, a := range auditOf(h) {
		if a.Action == "SCALE_STREAM" {
			scales++
		}
	}
	require.Equal(t, 1, scales)
	kvs, err := h.st.List(context.Background(), records.BucketAudit, "")
	require.NoError(t, err)
	require.Len(t, kvs, 1)
	var rec records.Audit
	require.NoError(t, json.Unmarshal(kvs[0].Value, &rec))
	require.Equal(t, string(applyqueue.Applied), rec.Outcome)

	// The report's job waited for the limit without failing: once it has
	// finished (it may still be editing the comment, or carry the limit it
	// was postponed for), it is not among the failing jobs, where a failed
	// job would stay.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		failing, err := h.st.FailingJobs(context.Background(), time.Time{}, 10)
		require.NoError(c, err)
		for _, j := range failing {
			assert.NotEqual(c, apply.EventReport, j.Event, "the report is not failed for the limit: %s: %s", j.State, j.LastError)
		}
	}, time.Minute, 100*time.Millisecond)
}

// An apply that meets GitHub's rate limit reading the merge commit, before
// its coordinator work, waits for the limit in place and then applies: it
// is not failed for it.
func TestAnApplyWaitsForGitHubsLimitBeforeItsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("terraform")
	}
	h := newHarness(t)
	pr := allowedScale(h, "scale-up")
	h.gh.FailNext("GET", "/repos/{owner}/{repo}/tarball/{ref}", 403, map[string]string{"retry-after": "2"})
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Equal(t, 1, jobs[0].Attempt)
	require.Zero(t, h.gh.PendingFaults(), "the limit was met")
	require.Contains(t, h.logs.String(), "apply waits for GitHub's rate limit; it continues then")
	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))
}

// The apply's report job is shardgate's own: a signed delivery naming its
// event (a forged report of an apply that never ran) is acknowledged and
// ignored, never queued.
func TestADeliveredApplyReportEventIsIgnored(t *testing.T) {
	if testing.Short() {
		t.Skip("terraform")
	}
	h := newHarness(t)
	payload, err := json.Marshal(apply.Report{Seq: "1", State: applyqueue.Applied, Conclusion: "success"})
	require.NoError(t, err)
	code, r := h.deliver(apply.EventReport, payload)
	require.Equal(t, 202, code)
	require.Equal(t, "ignored", r.Status, r.Reason)
	require.Empty(t, r.JobID)
}
