package bot

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// Re-running shardgate's check re-plans the head, when its sender may
// comment `/shardgate plan` (write access); a re-run by someone who may not
// (read access, or none) runs nothing, and the log says why.
func TestCheckRunRerequestReplans(t *testing.T) {
	h := newHarness(t)
	pr := h.openPR("rerun", with(baseGroups, map[string]int{"payments/ledger": 3}))
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	rerun := func(sender string) {
		h.run("check_run", githubtest.CheckRunRerequested(t, githubtest.CheckRunPayload{
			InstallationID: 1, Owner: owner, Repo: repoName, RepoID: h.gh.RepoID(owner, repoName),
			Name: prreport.CheckPlanPrefix + "streams", HeadSHA: head, AppID: h.gh.AppID(), PRNumbers: []int{pr.Number}, Sender: sender}))
	}
	before := len(h.gh.CheckRuns(owner, repoName))
	for _, sender := range []string{outsider, "stranger"} {
		rerun(sender)
		require.Len(t, h.gh.CheckRuns(owner, repoName), before, "a re-run by %s planned", sender)
		require.Contains(t, h.logs.String(), `"sender":"`+sender+`"`)
	}
	require.Contains(t, h.logs.String(), "check run re-run not run: its sender has no write access")
	rerun(author)
	require.Greater(t, len(h.gh.CheckRuns(owner, repoName)), before)
}

// Re-running the aggregate `shardgate` check re-plans the pull request as
// re-running a project's check does: above report.max_project_checks it is
// the only check a pull request has, so it is the only one a user can re-run.
func TestGateCheckRerunReplans(t *testing.T) {
	h := newHarness(t)
	pr := h.openPR("rerun-gate", with(baseGroups, map[string]int{"payments/ledger": 3}))
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	before := len(h.gh.CheckRuns(owner, repoName))
	h.run("check_run", githubtest.CheckRunRerequested(t, githubtest.CheckRunPayload{
		InstallationID: 1, Owner: owner, Repo: repoName, RepoID: h.gh.RepoID(owner, repoName),
		Name: prreport.CheckGateName, HeadSHA: head, AppID: h.gh.AppID(), PRNumbers: []int{pr.Number}, Sender: author}))
	require.Greater(t, len(h.gh.CheckRuns(owner, repoName)), before, "re-running the shardgate check planned nothing")
}
