package bot

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
)

// One check to require: `shardgate` on every pull request head, success iff
// every planned project is allowed, linking the comment.
func TestAggregateCheckFollowsEveryProjectsVerdict(t *testing.T) {
	h := newHarness(t)
	pr := h.openPR("scale", with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	gate := h.check(prreport.CheckGateName, head)
	require.Equal(t, "completed", gate.Status)
	require.Equal(t, "failure", gate.Conclusion, "a scale without the quiesce attestation is denied")
	require.Contains(t, gate.Summary, "| `streams` | ❌ denied |")
	commentID := h.shardgateComments(pr)[0].ID
	require.Contains(t, gate.Summary, fmt.Sprintf("/%s/%s/pull/%d#issuecomment-%d", owner, repoName, pr.Number, commentID), "it links the comment")

	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	gate = h.check(prreport.CheckGateName, head)
	require.Equal(t, "success", gate.Conclusion, "re-judged with the attestation: allowed")
	require.Contains(t, gate.Summary, "| `streams` | ✅ allowed |")
	require.Equal(t, "success", h.check(prreport.CheckPlanPrefix+"streams", head).Conclusion, "the project's own check stays")
}

// A pull request no project reads gets `shardgate` = success, so requiring
// it never blocks an unrelated change.
func TestAggregateCheckPassesAChangeNoProjectReads(t *testing.T) {
	h := newHarness(t)
	pr := h.openPRWith("docs", baseGroups, map[string]string{"README.md": "# docs only\n"})
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	gate := h.check(prreport.CheckGateName, head)
	require.Equal(t, "completed", gate.Status)
	require.Equal(t, "success", gate.Conclusion)
	require.Equal(t, "No Terraform project changed", gate.Title)
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		require.NotContains(t, c.Name, prreport.CheckPlanPrefix, "no project check on a change no project reads")
	}
}
