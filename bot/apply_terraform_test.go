package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// allowedScale opens a PR scaling create-order 4 -> 6 and gets it allowed
// with an approver's quiesce attestation.
func allowedScale(h *harness, branch string) githubtest.PullRequest {
	h.t.Helper()
	pr := h.openPR(branch, with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	require.Contains(h.t, h.theComment(pr), "✅ **Allowed")
	return pr
}

func TestApplyOnMerge(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "scale-up")
	before := len(h.gh.Requests())
	mergeSHA := h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Contains(t, jobs[0].Reason, "converged")
	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))

	body := h.eventuallyComment(pr, "✅ applied")
	// The apply edited the comment once before its result: when terraform
	// apply started (pre-flight, the re-plan and the wait for convergence
	// pass unshown: the status page shows them).
	var edits []string
	for _, r := range h.gh.Requests()[before:] {
		if route(r) == "PATCH /repos/acme/streams/issues/comments/{id}" {
			edits = append(edits, string(r.Body))
		}
	}
	shown := func(s string) (n int) {
		for _, e := range edits {
			if strings.Contains(e, s) {
				n++
			}
		}
		return n
	}
	require.Zero(t, shown("🔄 preflight"), "pre-flight is not shown")
	require.Zero(t, shown("🔄 planning"), "the re-plan is not shown")
	require.Equal(t, 1, shown("🔄 applying"), "terraform apply is shown once")
	require.Contains(t, body, "### Apply")
	require.Contains(t, body, "merged and applied (1 project); the coordinator has converged.")
	check := h.check(prreport.CheckApplyPrefix+"streams", mergeSHA)
	require.Equal(t, "success", check.Conclusion)

	// The simulator saw exactly one stream scale, from terraform's apply step.
	var scales []coordsimAudit
	for _, a := range auditOf(h) {
		if a.Action == "SCALE_STREAM" {
			scales = append(scales, a)
		}
	}
	require.Len(t, scales, 1)
	require.Equal(t, "create-order", scales[0].StreamPrefix)

	// The audit record names who merged, what was reviewed and applied, and the attestation used.
	kvs, err := h.st.List(context.Background(), records.BucketAudit, "")
	require.NoError(t, err)
	require.Len(t, kvs, 1)
	var rec records.Audit
	require.NoError(t, json.Unmarshal(kvs[0].Value, &rec))
	require.Equal(t, approver, rec.MergedBy)
	require.Equal(t, string(applyqueue.Applied), rec.Outcome)
	require.Equal(t, rec.ReviewedFingerprint, rec.AppliedFingerprint)
	require.Equal(t, "applied", rec.TerraformOutcome)
	require.Len(t, rec.Attestations, 1)
	require.Equal(t, approver, rec.Attestations[0].Actor)

	// Every coordinator call of the apply names the pull request, and the audit
	// record's request-id prefix finds them in the coordinator's audit log.
	require.NotEmpty(t, rec.RequestIDPrefix)
	require.Equal(t, fmt.Sprintf("shardgate:%s/%s#%d merged by %s", owner, repoName, pr.Number, approver), scales[0].RequestedBy)
	require.True(t, strings.HasPrefix(scales[0].RequestID, rec.RequestIDPrefix+"-"), "request id %q", scales[0].RequestID)
	// The record lists the ids of exactly the mutations the apply made.
	var made []string
	for _, a := range auditOf(h) {
		if strings.HasPrefix(a.RequestID, rec.RequestIDPrefix+"-") && !slices.Contains(made, a.RequestID) {
			made = append(made, a.RequestID)
		}
	}
	require.NotEmpty(t, made)
	require.ElementsMatch(t, made, rec.RequestIDs)
}

type coordsimAudit struct {
	Action, StreamPrefix, RequestedBy, RequestID string
}

func auditOf(h *harness) []coordsimAudit {
	var out []coordsimAudit
	for _, e := range h.sim.Audit() {
		b, _ := json.Marshal(e)
		var a coordsimAudit
		_ = json.Unmarshal(b, &a)
		out = append(out, a)
	}
	return out
}

// Main moved between review and merge: the merge commit would also change a
// group the review never saw, so nothing is applied and the difference is said.
func TestApplyRefusedWhenMainMoved(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "reviewed")
	h.repo.Checkout("main")
	h.repo.WriteFile("streams/clicks.tf", `module "clicks" {
  source               = "../modules/stream-group"
  coordinator_base_url = "`+h.simURL+`"
  stream_prefix        = "clicks"
  consumer_group       = "etl"
  shard_count          = 3
}
`)
	h.repo.Commit("someone adds a group directly on main")
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Equal(t, applyqueue.Failed, jobs[0].State)
	require.Contains(t, jobs[0].Reason, "clicks/etl at "+h.simURL+": not in the reviewed plan")
	require.Contains(t, jobs[0].Reason, "Policy on the merge commit's plan: denied")
	require.Equal(t, map[string]int{"billing": 4, "audit": 4}, h.simShards("create-order"), "nothing applied")
	h.eventuallyComment(pr, "❌ not applied")
}

// A failed apply is reported as not applied; an approver's /shardgate apply retries it.
func TestApplyFailureAndRetry(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "flaky")
	h.sim.SetTerminating(true) // every mutation: 503 COORDINATOR_TERMINATING
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Equal(t, applyqueue.Failed, jobs[0].State)
	require.Contains(t, jobs[0].Reason, "terraform apply failed")
	h.eventuallyComment(pr, "An approver can retry with `/shardgate apply`")

	c := h.comment(pr, author, "/shardgate apply")
	require.Equal(t, []string{"-1"}, reactions(h, c.ID), "the author is not an approver")

	h.sim.SetTerminating(false)
	c = h.comment(pr, approver, "/shardgate apply")
	require.Equal(t, []string{"+1"}, reactions(h, c.ID))
	jobs = h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))
}

// An active migration on the stream makes the apply wait, then proceed.
func TestApplyWaitsForActiveMigration(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "after-migration")
	c, err := coord.New(h.simURL, coord.WithBasicAuth("admin", "password"))
	require.NoError(t, err)
	h.sim.SetDrainingStuck("create-order", true)
	_, err = c.ScaleStream(context.Background(), "create-order", coord.ScaleRequest{TargetShardCount: 3, RequestedBy: "operator", Reason: "by hand"})
	require.NoError(t, err)
	h.merge(pr, approver)
	h.eventuallyComment(pr, "active migration")
	h.sim.SetDrainingStuck("create-order", false)
	jobs := h.waitApplies(pr)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))
}

// An attestation that expired before the apply is asked for again and waited for.
func TestApplyAsksForAFreshAttestation(t *testing.T) {
	h := newHarness(t)
	h.cfg.AttestationTTL = 2 * time.Second
	pr := allowedScale(h, "slow-merge")
	time.Sleep(2 * time.Second)
	h.merge(pr, approver)
	require.Eventually(t, func() bool {
		return strings.Contains(h.theComment(pr), "waiting for a fresh producer-quiesce attestation")
	},
		time.Minute, 50*time.Millisecond)
	h.cfg.AttestationTTL = time.Hour
	h.comment(pr, teamMate, "/shardgate attest quiesce create-order")
	jobs := h.waitApplies(pr)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
}

// A Terraform state lock held by another operator is reported with its holder
// and waited out; the holder finishes and releases its own lock.
func TestApplyWaitsForStateLock(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "locked")
	tf := tftest.Binary(t)
	// Another operator applies main on the same state; main gained a slow extra
	// resource meanwhile, so the merge commit's plan, made after the operator's
	// apply, has nothing left to do for it (an unreviewed change would be refused).
	h.repo.Checkout("main")
	h.repo.WriteFile("streams/slow.tf", `resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "sleep 8"
  }
}
`)
	h.repo.Commit("a slow resource, applied by an operator")
	dir := t.TempDir()
	out, err := exec.Command("sh", "-c", "git -C "+h.repo.Dir()+" archive main | tar -x -C "+dir).CombinedOutput()
	require.NoError(t, err, string(out))
	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=")
	initCmd := exec.Command(tf, "init", "-input=false")
	initCmd.Dir, initCmd.Env = filepath.Join(dir, "streams"), env
	out, err = initCmd.CombinedOutput()
	require.NoError(t, err, string(out))
	operator := exec.Command(tf, "apply", "-input=false", "-auto-approve")
	operator.Dir, operator.Env = filepath.Join(dir, "streams"), env
	var opOut strings.Builder
	operator.Stdout, operator.Stderr = &opOut, &opOut
	require.NoError(t, operator.Start())
	lockInfo := filepath.Join(filepath.Dir(h.state), "."+filepath.Base(h.state)+".lock.info")
	require.Eventually(t, func() bool { _, err := os.Stat(lockInfo); return err == nil }, 20*time.Second, 20*time.Millisecond,
		"the operator's apply holds the state lock")

	h.merge(pr, approver)
	body := h.eventuallyComment(pr, "waiting for the Terraform state lock held by")
	require.Contains(t, body, "never force-unlocks")
	require.NoError(t, operator.Wait(), opOut.String())
	jobs := h.waitApplies(pr)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.NoFileExists(t, lockInfo)
}

// Two merges on one stream: the second waits behind the first, and says so on
// its PR. Its own change was fine when reviewed, but on the merge commit the
// stream would end with two shard counts: denied there, so not applied.
func TestSecondMergeOnAStreamWaitsAndIsJudgedOnTheMergeCommit(t *testing.T) {
	h := newHarness(t)
	first := allowedScale(h, "scale-first")
	h.repo.Checkout("main")
	h.repo.Branch("add-reports")
	h.repo.WriteFile("streams/reports.tf", `module "reports" {
  source               = "../modules/stream-group"
  coordinator_base_url = "`+h.simURL+`"
  stream_prefix        = "create-order"
  consumer_group       = "reports"
  shard_count          = 4
}
`)
	h.repo.Commit("a reports group on create-order")
	second := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "add-reports", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, second.Number)))
	require.Contains(t, h.theComment(second), "✅ **Allowed", "a new group at the stream's count is fine at review")

	h.sim.SetDelay(700 * time.Millisecond) // the first apply takes a while
	h.merge(first, approver)
	h.merge(second, approver)
	h.eventuallyComment(second, fmt.Sprintf("waiting behind #%d (`streams`) on stream `create-order`", first.Number))
	h.sim.SetDelay(0)

	require.Equal(t, applyqueue.Applied, h.waitApplies(first)[0].State)
	jobs := h.waitApplies(second)
	require.Equal(t, applyqueue.Failed, jobs[0].State)
	require.Contains(t, jobs[0].Reason, "on the merge commit the policy denies the change: conflicting_shard_count")
	_, exists := h.simShards("create-order")["reports"]
	require.False(t, exists, "nothing applied for the second merge")
}

// A scale-out of a stream whose groups have no live members would never leave
// ACTIVE (coordinator.md §6.7): refused at pre-flight, with the reason.
func TestApplyRefusesScaleOutWithoutLiveMembers(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "no-consumers")
	require.True(t, h.sim.SetLiveMembers("create-order", "billing", 0))
	require.True(t, h.sim.SetLiveMembers("create-order", "audit", 0))
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Equal(t, applyqueue.Failed, jobs[0].State)
	require.Contains(t, jobs[0].Reason, "pre-flight refused")
	require.Contains(t, strings.ToLower(jobs[0].Reason), "live member")
	require.Equal(t, map[string]int{"billing": 4, "audit": 4}, h.simShards("create-order"), "nothing scaled")
	h.eventuallyComment(pr, "❌ not applied")
}
