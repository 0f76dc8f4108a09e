package bot

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// A scale whose apply failed leaves the instances tainted. The next plan shows
// a replace whose before and after both say the new count, yet applying it
// scales the live stream: the gate judges it as the scale it is (from the live
// count, attestation required), and the bot pre-flights it and waits for
// convergence.
func TestTaintedRetryIsJudgedAsAScaleFromTheLiveCount(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "scale-fails")
	h.sim.SetTerminating(true) // every mutation: 503, so apply.sh fails and taints
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Equal(t, applyqueue.Failed, jobs[0].State)
	require.Equal(t, map[string]int{"billing": 4, "audit": 4}, h.simShards("create-order"), "the failed apply scaled nothing")
	h.sim.SetTerminating(false)

	// Another pull request touches the project; its plan carries the tainted retry.
	h.repo.Checkout("main")
	h.repo.Branch("unrelated")
	h.repo.WriteFile("streams/notes.tf", "# an unrelated change to the streams project\n")
	h.repo.Commit("notes")
	next := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "unrelated", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, next.Number)))
	body := h.theComment(next)
	require.Contains(t, body, "❌ **Denied", "a tainted retry scales the live stream 4 → 6")
	require.Contains(t, body, "quiesce_attestation")

	h.comment(next, approver, "/shardgate attest quiesce create-order")
	require.Contains(t, h.theComment(next), "✅ **Allowed")
	h.merge(next, approver)
	jobs = h.waitApplies(next)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Contains(t, jobs[0].Reason, "converged", "the bot waited for the coordinator")
	require.Contains(t, jobs[0].Reason, "`create-order` at 6 shards")
	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))
}

// Everything in a plan is shown, and the apply guard compares all of it: a
// merge commit that destroys a resource the review did not show is refused.
func TestOtherResourcesAreShownAndGuarded(t *testing.T) {
	h := newHarnessBase(t)
	h.repo.WriteFile("streams/bucket.tf", `resource "terraform_data" "bucket" {
  input = "logs"
}
`)
	h.repo.WriteFile("streams/iam.tf", `resource "terraform_data" "iam_policy" {
  input = "read-only"
}
`)
	h.repo.Commit("two other resources")
	h.applyMain(tftest.Binary(t))
	h.start()

	h.repo.Checkout("main")
	h.repo.Branch("scale-and-drop-bucket")
	h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	h.repo.WriteFile("streams/bucket.tf", "# the bucket is gone\n")
	h.repo.Commit("scale create-order and drop the bucket")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "scale-and-drop-bucket", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))
	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	body := h.theComment(pr)
	require.Contains(t, body, "✅ **Allowed")
	require.Contains(t, body, "terraform_data.bucket", "the other change is shown")
	require.True(t, strings.Contains(body, "destroy") || strings.Contains(body, "delete"), body)

	// On main, someone drops the IAM policy too; the merge commit's plan then
	// destroys something the review never showed.
	h.repo.Checkout("main")
	h.repo.WriteFile("streams/iam.tf", "# the IAM policy is gone\n")
	h.repo.Commit("drop the IAM policy directly on main")
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Equal(t, applyqueue.Failed, jobs[0].State)
	require.Contains(t, jobs[0].Reason, "terraform_data.iam_policy (terraform_data): destroy is not in the reviewed plan")
	require.Equal(t, map[string]int{"billing": 4, "audit": 4}, h.simShards("create-order"), "nothing applied")
}
