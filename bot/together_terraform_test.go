package bot

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/streamroot"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
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

// The project's check run is completed once, with the verdict judged
// together. Judged alone, the scale of create-order passes (the stream is
// duplicate tolerant, its delta within bounds): completed "success" first,
// the check run would pass a branch protection that requires it until its
// second completion, and each such plan would cost a write per project
// (issue 37).
func TestAProjectJudgedTogetherCompletesItsCheckRunOnce(t *testing.T) {
	h := newHarnessBase(t)
	fraudState := filepath.Join(filepath.Dir(h.state), "fraud.tfstate")
	h.repo.WriteFile("fraud/main.tf", streamroot.MainTF(fraudState, h.simURL, map[string]int{"create-order/fraud": 4}))
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\n  - name: fraud\n    dir: fraud\n"+
		"streams:\n  duplicate_tolerant: [create-order]\n")
	h.repo.Commit("a second project declaring a group of create-order")
	h.start()

	before := len(h.gh.Requests())
	pr := h.openPR("scale", with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	plan := h.check(prreport.CheckPlanPrefix+"streams", pr.HeadSHA)
	require.Equal(t, "failure", plan.Conclusion, plan.Summary)
	require.Contains(t, plan.Summary+plan.Text, "conflicting_shard_count")
	require.NotContains(t, plan.Summary+plan.Text, "quiesce_attestation", "judged alone, the plan passes")
	require.Equal(t, []string{"failure"}, checkRunCompletions(t, h.gh.Requests()[before:], plan.ID),
		"the plan's check run is completed once, judged with the other project's count")
}

// checkRunCompletions lists the conclusions the requests completed check
// run id with, in order.
func checkRunCompletions(t *testing.T, requests []githubtest.Recorded, id int64) []string {
	t.Helper()
	var out []string
	for _, q := range requests {
		if q.Method != http.MethodPatch || !strings.HasSuffix(q.Path, fmt.Sprintf("/check-runs/%d", id)) {
			continue
		}
		var body struct{ Status, Conclusion string }
		require.NoError(t, json.Unmarshal(q.Body, &body))
		if body.Status == "completed" || body.Conclusion != "" {
			out = append(out, body.Conclusion)
		}
	}
	return out
}
