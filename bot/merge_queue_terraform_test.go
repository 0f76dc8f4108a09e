package bot

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/streamroot"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// groupCheckRequested builds a merge group of prs (after the group ahead,
// or off main) and delivers its checks_requested, as GitHub's merge queue does.
func (h *harness) groupCheckRequested(after *githubtest.MergeGroup, prs ...githubtest.PullRequest) (githubtest.MergeGroup, []byte) {
	h.t.Helper()
	var numbers []int
	for _, pr := range prs {
		numbers = append(numbers, pr.Number)
	}
	g := h.gh.QueueMergeGroup(owner, repoName, after, numbers...)
	return g, githubtest.MergeGroupChecksRequested(h.t, h.gh.MergeGroupPayload(owner, repoName, g))
}

// queue is groupCheckRequested waiting for the group's job.
func (h *harness) queue(after *githubtest.MergeGroup, prs ...githubtest.PullRequest) githubtest.MergeGroup {
	h.t.Helper()
	g, body := h.groupCheckRequested(after, prs...)
	h.run("merge_group", body)
	return g
}

func (h *harness) git(args ...string) string {
	h.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", h.repo.Dir()}, args...)...).CombinedOutput()
	require.NoError(h.t, err, string(out))
	return strings.TrimSpace(string(out))
}

// queueMerge lands a merge group as the queue does: main moves to the
// group's head, and each pull request is closed merged, in queue order, its
// merge commit the group's merge of it.
func (h *harness) queueMerge(g githubtest.MergeGroup, prs ...githubtest.PullRequest) {
	h.t.Helper()
	h.repo.Checkout("main")
	h.git("merge", "--quiet", "--ff-only", g.HeadSHA)
	for _, pr := range prs {
		sha := h.git("log", "--format=%H", "--grep", fmt.Sprintf("^Merge pull request #%d from", pr.Number), g.BaseSHA+".."+g.HeadSHA)
		require.Len(h.t, strings.Fields(sha), 1)
		h.gh.MergePR(owner, repoName, pr.Number, approver, sha)
		p := h.gh.PRPayload(owner, repoName, pr.Number)
		p.Sender = approver
		h.run("pull_request", githubtest.PullRequestClosedMergedSynthetic(h.t, p, approver, sha, h.clock.Now()))
	}
}

func (h *harness) appliesOf(pr githubtest.PullRequest) []*applyqueue.Job {
	h.t.Helper()
	jobs, err := h.srv.applies.ListForPR(context.Background(), pullreq.Ref{Installation: 1, Owner: owner, Repo: repoName, Number: pr.Number})
	require.NoError(h.t, err)
	return jobs
}

// Queued allowed pull requests get `shardgate` = success on the group's head
// within a minute (the attestation given on a pull request counts there); the
// plan is a preview that applies nothing, each pull request's comment gains
// one line, and the queue's merge applies each pull request once.
func TestMergeQueueJudgesTheGroupHead(t *testing.T) {
	h := newHarness(t)
	scale := allowedScale(h, "scale-up")
	notes := h.openPRWith("notes", baseGroups, map[string]string{"streams/notes.tf": h.extraGroup("notes", "notes", "indexer", 2)})
	require.Equal(t, "success", h.check(prreport.CheckGateName, h.gh.PR(owner, repoName, notes.Number).HeadSHA).Conclusion)
	asked := time.Now()
	g := h.queue(nil, scale, notes)
	require.Less(t, time.Since(asked), time.Minute, "the queue waits on it: judged within a minute")

	gate := h.check(prreport.CheckGateName, g.HeadSHA)
	require.Equal(t, "completed", gate.Status)
	require.Equal(t, "success", gate.Conclusion, gate.Summary)
	require.Contains(t, gate.Summary, "| `streams` | ✅ allowed |")
	plan := h.check(prreport.CheckPlanPrefix+"streams", g.HeadSHA)
	require.Equal(t, "success", plan.Conclusion, plan.Summary)
	for _, pr := range []githubtest.PullRequest{scale, notes} {
		require.Contains(t, h.theComment(pr), "in the merge queue: judged ✅ on `"+pullreq.ShortSHA(g.HeadSHA)+"`")
		require.Empty(t, h.appliesOf(pr), "a group's plan never starts an apply")
	}
	require.Equal(t, map[string]int{"billing": 4, "audit": 4}, h.simShards("create-order"))

	h.queueMerge(g, scale, notes)
	for _, pr := range []githubtest.PullRequest{scale, notes} {
		jobs := h.waitApplies(pr)
		require.Len(t, jobs, 1, "#%d applied once", pr.Number)
		require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	}
	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))
	require.Equal(t, map[string]int{"indexer": 2}, h.simShards("notes"))
}

// extraGroup is another file of the streams project declaring one more
// group (module name) of stream prefix, at count.
func (h *harness) extraGroup(name, prefix, group string, count int) string {
	return fmt.Sprintf(`module %q {
  source = "../modules/stream-group"

  coordinator_base_url  = %q
  coordinator_username  = var.coordinator_username
  coordinator_password  = var.coordinator_password
  stream_prefix         = %q
  consumer_group        = %q
  shard_count           = %d
  poll_interval_seconds = 1
  requested_by          = var.shardgate_requested_by
  reason                = var.shardgate_reason
  request_id_prefix     = var.shardgate_request_id_prefix
}
`, name, h.simURL, prefix, group, count)
}

// queueFailingTogether queues pull requests that each pass alone in one
// merge group, whose `shardgate` check fails.
func (h *harness) queueFailingTogether(prs ...githubtest.PullRequest) (githubtest.MergeGroup, githubtest.CheckRun) {
	h.t.Helper()
	for _, pr := range prs {
		head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
		require.Equal(h.t, "success", h.check(prreport.CheckGateName, head).Conclusion, "#%d passes alone", pr.Number)
	}
	g := h.queue(nil, prs...)
	gate := h.check(prreport.CheckGateName, g.HeadSHA)
	require.Equal(h.t, "failure", gate.Conclusion, gate.Summary)
	return g, gate
}

// Two pull requests that each pass alone but together ask one stream for two
// shard counts: the group that lands both fails `shardgate`, while each pull
// request's own head stays green.
func TestMergeQueueJudgesWhatLandsTogether(t *testing.T) {
	h := newHarness(t)
	scale := allowedScale(h, "scale-up") // create-order 4 → 6
	// A new group of create-order, at today's 4.
	fraud := h.openPRWith("fraud", baseGroups, map[string]string{"streams/fraud.tf": h.extraGroup("fraud", "create-order", "fraud", 4)})
	g, gate := h.queueFailingTogether(scale, fraud)
	require.Contains(t, gate.Summary, "| `streams` | ❌ denied |")
	plan := h.check(prreport.CheckPlanPrefix+"streams", g.HeadSHA)
	require.Contains(t, plan.Summary+plan.Text, "conflicting_shard_count")
	require.NotContains(t, plan.Summary+plan.Text, "quiesce_attestation", "the scale's attestation, given on its pull request, counts in the group")
	for _, pr := range []githubtest.PullRequest{scale, fraud} {
		head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
		require.Equal(t, "success", h.check(prreport.CheckGateName, head).Conclusion, "#%d's own head stays green", pr.Number)
		require.Contains(t, h.theComment(pr), "in the merge queue: judged ❌ on `"+pullreq.ShortSHA(g.HeadSHA)+"`")
	}
}

// A group dequeued while it is planned leaves no check run in progress on
// its head, and its plan reports nothing after.
func TestMergeQueueDequeuedGroupLeavesNoCheckInProgress(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "scale-up")
	g, body := h.groupCheckRequested(nil, pr)
	// The group's checkout hangs until the plan is cancelled.
	h.gh.Inject(githubtest.Fault{Method: "GET", Pattern: "/repos/{owner}/{repo}/tarball/{ref}", Hang: true})
	code, planned := h.deliver("merge_group", body)
	require.Equal(t, 202, code, planned.Reason)
	require.Eventually(t, func() bool { return h.gh.PendingFaults() == 0 }, time.Minute, 20*time.Millisecond, "the group's plan fetches its head")
	require.Equal(t, "in_progress", h.check(prreport.CheckGateName, g.HeadSHA).Status, "the queue sees the group pending")
	h.run("merge_group", githubtest.MergeGroupDestroyed(t, h.gh.MergeGroupPayload(owner, repoName, g), "dequeued"))
	h.waitJob(planned.JobID)
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		if c.HeadSHA == g.HeadSHA {
			require.Equal(t, "completed", c.Status, "check %q on the dequeued group", c.Name)
			require.Equal(t, "cancelled", c.Conclusion, "check %q: a dequeued group is not judged", c.Name)
		}
	}
	require.Contains(t, h.logs.String(), "merge group dequeued while it was planned")

	// A group destroyed before its checks were asked for is never planned.
	docs := h.openPRWith("docs", baseGroups, map[string]string{"NOTES.md": "notes\n"})
	again, body := h.groupCheckRequested(nil, docs)
	require.NotEqual(t, g.HeadSHA, again.HeadSHA)
	h.run("merge_group", githubtest.MergeGroupDestroyed(t, h.gh.MergeGroupPayload(owner, repoName, again), "dequeued"))
	h.run("merge_group", body)
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		require.NotEqual(t, again.HeadSHA, c.HeadSHA, "nothing reported on a group already gone")
	}
}

// A group whose job fails for good does not leave the queue waiting: its
// checks are completed as failed, saying why.
func TestMergeQueueFailedGroupJobFailsItsChecks(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "scale-up")
	g, body := h.groupCheckRequested(nil, pr)
	h.gh.Inject(githubtest.Fault{Method: "GET", Pattern: "/repos/{owner}/{repo}/compare/{basehead}", Status: 404, Times: 100})
	code, r := h.deliver("merge_group", body)
	require.Equal(t, 202, code, r.Reason)
	require.Eventually(t, func() bool {
		job, err := h.st.GetJob(context.Background(), r.JobID)
		return err == nil && job.State == store.JobFailed
	}, time.Minute, 50*time.Millisecond)
	require.Eventually(t, func() bool { return h.check(prreport.CheckGateName, g.HeadSHA).Status == "completed" }, time.Minute, 50*time.Millisecond)
	gate := h.check(prreport.CheckGateName, g.HeadSHA)
	require.Equal(t, "failure", gate.Conclusion)
	require.Contains(t, gate.Summary, "could not finish judging this merge group")
}

// Where terraform cannot be confined, a merge group is not planned either:
// its `shardgate` check fails, saying why.
func TestMergeQueueNoSandboxNoPlan(t *testing.T) {
	old := sandboxSupported
	t.Cleanup(func() { sandboxSupported = old })
	sandboxSupported = func() error { return errors.New("landlock is not available on this kernel") }
	h := newHarness(t)
	pr := h.openPR("scale", with(baseGroups, map[string]int{"create-order/billing": 6}))
	g := h.queue(nil, pr)
	gate := h.check(prreport.CheckGateName, g.HeadSHA)
	require.Equal(t, "failure", gate.Conclusion)
	require.Contains(t, gate.Summary, "cannot sandbox Terraform (landlock is not available on this kernel)")
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		require.False(t, c.HeadSHA == g.HeadSHA && c.Name != prreport.CheckGateName, "nothing planned on the group: %q", c.Name)
	}
}

// A merge commit that is the head of a group shardgate refused is not
// applied, though it does what the pull request's own head planned: two
// projects of one repository, one pull request each, pass alone (the scale
// of create-order in streams; a new group of it, at today's count, in
// fraud) and conflict together. The queue lands them all the same (the
// check was not required): the first pull request's merge commit was never a
// group's head and applies as any merge does; the second's is the refused
// group's head, and its apply is refused, saying so on the pull request.
func TestMergeQueueRefusedGroupIsNotApplied(t *testing.T) {
	h := newHarnessBase(t)
	fraudState := filepath.Join(filepath.Dir(h.state), "fraud.tfstate")
	h.repo.WriteFile("fraud/main.tf", streamroot.MainTF(fraudState, h.simURL, map[string]int{}))
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\n  - name: fraud\n    dir: fraud\n")
	h.repo.Commit("a second project")
	h.start()

	scale := allowedScale(h, "scale-up")
	fraud := h.openPRWith("fraud", baseGroups, map[string]string{
		"fraud/main.tf": streamroot.MainTF(fraudState, h.simURL, map[string]int{"create-order/fraud": 4})})
	g, _ := h.queueFailingTogether(scale, fraud)

	h.queueMerge(g, scale, fraud)
	jobs := h.waitApplies(scale)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	jobs = h.waitApplies(fraud)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Failed, jobs[0].State, jobs[0].Reason)
	require.Contains(t, jobs[0].Reason, "the merge group `"+pullreq.ShortSHA(g.HeadSHA)+"` that landed this pull request was refused by shardgate")
	require.Contains(t, h.theComment(fraud), "was refused by shardgate")
	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"), "the refused group's count never reached the stream")
}
