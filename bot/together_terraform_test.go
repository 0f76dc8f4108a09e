package bot

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/streamroot"
)

// Two projects of one repository declare groups of the create-order stream.
// A pull request that scales the stream in one project is judged with the
// other's count at the same commit (planned for it, though the change does
// not touch it): conflicting_shard_count names the other project.
func TestProjectsDeclaringOneStreamAreJudgedTogether(t *testing.T) {
	h := newHarnessBase(t)
	fraudState := filepath.Join(filepath.Dir(h.state), "fraud.tfstate")
	h.repo.WriteFile("fraud/main.tf", streamroot.MainTF(fraudState, h.simURL, map[string]int{"create-order/fraud": 4}))
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\n  - name: fraud\n    dir: fraud\n")
	h.repo.Commit("a second project declaring a group of create-order")
	h.start()

	pr := h.openPR("scale", with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	plan := h.check(prreport.CheckPlanPrefix+"streams", head)
	require.Equal(t, "failure", plan.Conclusion, plan.Summary)
	require.Contains(t, plan.Summary+plan.Text, "conflicting_shard_count")
	require.Contains(t, plan.Summary+plan.Text, "project fraud: module.stream_group", "the finding names the other project")
	body := h.theComment(pr)
	require.Contains(t, body, "project fraud")
	require.Equal(t, "failure", h.check(prreport.CheckGateName, head).Conclusion)
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		require.NotEqual(t, prreport.CheckPlanPrefix+"fraud", c.Name, "the other project is compared, not reported")
	}
}
