package bot

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/redact/redacttest"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// hiddenTF is a root module file whose stream prefix and consumer group come
// from sensitive variables.
const hiddenTF = `variable "secret_prefix" {
  type      = string
  default   = "ledger-7f3a9c"
  sensitive = true
}

variable "secret_group" {
  type      = string
  default   = "payout-b41e"
  sensitive = true
}

module "hidden" {
  source                = "../modules/stream-group"
  coordinator_base_url  = %q
  coordinator_username  = var.coordinator_username
  coordinator_password  = var.coordinator_password
  stream_prefix         = var.secret_prefix
  consumer_group        = var.secret_group
  shard_count           = 2
  poll_interval_seconds = 1
}
`

// A group named by sensitive variables is planned, judged and applied like any
// other (real terraform, the simulator gets the real name), and no comment,
// check run, request to GitHub or log line shows its names: "(sensitive)" does.
func TestSensitiveNamesAreJudgedButNeverShown(t *testing.T) {
	h := newHarness(t)
	secrets := []string{"ledger-7f3a9c", "payout-b41e"}
	h.repo.Checkout("main")
	h.repo.Branch("hidden")
	h.repo.WriteFile("streams/hidden.tf", fmt.Sprintf(hiddenTF, h.simURL))
	h.repo.Commit("a stream named by a sensitive variable")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "hidden", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))

	body := h.theComment(pr)
	require.Contains(t, body, "✅ **Allowed", body)
	require.Contains(t, body, report.Sensitive)
	redacttest.RequireNoSecret(t, body, secrets...)
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	check := h.check(prreport.CheckPlanPrefix+"streams", head)
	require.Equal(t, "success", check.Conclusion)
	redacttest.RequireNoSecret(t, check.Title+"\n"+check.Summary+"\n"+check.Text, secrets...)

	mergeSHA := h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Equal(t, map[string]int{"payout-b41e": 2}, h.simShards("ledger-7f3a9c"), "the coordinator got the real names")

	body = h.eventuallyComment(pr, "✅ applied")
	redacttest.RequireNoSecret(t, body, secrets...)
	apply := h.check(prreport.CheckApplyPrefix+"streams", mergeSHA)
	redacttest.RequireNoSecret(t, apply.Title+"\n"+apply.Summary+"\n"+apply.Text, secrets...)
	for _, r := range h.gh.Requests() {
		redacttest.RequireNoSecret(t, r.Path+"?"+r.RawQuery+"\n"+string(r.Body), secrets...)
	}
	redacttest.RequireNoSecret(t, h.logs.String(), secrets...)
}
