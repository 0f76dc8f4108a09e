package bot

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/phases"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
)

func with(groups map[string]int, changes map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range groups {
		out[k] = v
	}
	for k, v := range changes {
		if v == 0 {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// The review flow of one pull request, step by step, against the real terraform,
// the coordinator simulator and the fake GitHub.
func TestPullRequestReviewFlow(t *testing.T) {
	h := newHarness(t)
	bigScale := with(baseGroups, map[string]int{"create-order/billing": 16, "create-order/audit": 16})

	// Opened: one comment, one check, the coordinator changes, denied.
	before := len(h.gh.Requests())
	pr := h.openPR("scale-create-order", bigScale)
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	// The job read neither the pull request nor its labels from GitHub (the
	// event carries both), and wrote the comment twice: "planning", then
	// the plans.
	planCalls := callsSince(h, before)
	require.NotContains(t, planCalls, "GET /repos/acme/streams/pulls/{id}")
	require.NotContains(t, planCalls, "GET /repos/acme/streams/issues/{id}/labels")
	require.Equal(t, 1, planCalls["POST /repos/acme/streams/issues/{id}/comments"])
	require.Equal(t, 1, planCalls["PATCH /repos/acme/streams/issues/comments/{id}"])
	body := h.theComment(pr)
	require.Contains(t, body, "| `create-order` | `billing` | scale | 4 → 16 |")
	require.Contains(t, body, "Live coordinator state was read")
	require.Contains(t, body, "(`shard_delta`)")
	require.Contains(t, body, "(`quiesce_attestation`)")
	check := h.check(prreport.CheckPlanPrefix+"streams", head)
	require.Equal(t, "completed", check.Status)
	require.Equal(t, "failure", check.Conclusion)
	require.Contains(t, check.Summary, "shard_delta")

	// An exception label added by the PR's author does not count.
	h.label(pr, "policy-exception/shard_delta", author)
	body = h.theComment(pr)
	require.Contains(t, body, "Labels not counted")
	require.Contains(t, body, "added by the pull request's author")
	require.Equal(t, "failure", h.check(prreport.CheckPlanPrefix+"streams", head).Conclusion)

	// An outsider's command is refused with a reason.
	c := h.comment(pr, outsider, "/shardgate attest quiesce create-order")
	require.Equal(t, []string{"-1"}, reactions(h, c.ID))
	require.True(t, hasComment(h, pr, "need write access"))

	// An approver's label counts; the quiesce attestation is still missing.
	h.gh.RemoveLabel(owner, repoName, pr.Number, "policy-exception/shard_delta", author)
	h.label(pr, "policy-exception/shard_delta", approver)
	body = h.theComment(pr)
	require.Contains(t, body, "Exceptions applied")
	require.Contains(t, body, "by "+approver)
	require.NotContains(t, body, "@"+approver, "approvers are named without a mention")
	require.Contains(t, body, "(`quiesce_attestation`)")

	// An approver (through a team) attests that producers are quiesced: allowed.
	c = h.comment(pr, teamMate, "Producers paused, retries drained.\n/shardgate attest quiesce create-order")
	require.Equal(t, []string{"+1"}, reactions(h, c.ID))
	body = h.theComment(pr)
	require.Contains(t, body, "✅ **Allowed")
	require.Contains(t, body, "Producer-quiesce attestations used")
	require.Equal(t, "success", h.check(prreport.CheckPlanPrefix+"streams", head).Conclusion)

	// A push voids the exception label (removed, and said so) and the
	// attestation (bound to the old head): the same comment is edited.
	commentID := h.shardgateComments(pr)[0].ID
	newHead := h.push(pr, func() { h.repo.WriteFile("streams/README.md", "streams\n") })
	require.NotEqual(t, head, newHead)
	require.Len(t, h.shardgateComments(pr), 1, "one comment, edited in place")
	require.Equal(t, commentID, h.shardgateComments(pr)[0].ID)
	body = h.theComment(pr)
	require.Contains(t, body, "Removed `policy-exception/shard_delta`")
	require.NotContains(t, h.gh.Labels(owner, repoName, pr.Number), "policy-exception/shard_delta")
	require.Contains(t, body, "(`shard_delta`)")
	require.Equal(t, "failure", h.check(prreport.CheckPlanPrefix+"streams", newHead).Conclusion)
	require.Equal(t, "success", h.check(prreport.CheckPlanPrefix+"streams", head).Conclusion, "the old head's check keeps its verdict")

	// /shardgate help answers with the commands.
	c = h.comment(pr, author, "/shardgate help")
	require.Equal(t, []string{"+1"}, reactions(h, c.ID))
	require.True(t, hasComment(h, pr, "/shardgate attest quiesce <stream_prefix>"))
}

func reactions(h *harness, commentID int64) []string {
	var out []string
	for _, r := range h.gh.Reactions(owner, repoName, commentID) {
		out = append(out, r.Content)
	}
	return out
}

func hasComment(h *harness, pr githubtest.PullRequest, text string) bool {
	for _, c := range h.gh.Comments(owner, repoName, pr.Number) {
		if strings.Contains(c.Body, text) {
			return true
		}
	}
	return false
}

// A pull request cannot loosen its own gate: .shardgate.yaml and the policy
// settings come from the base branch.
func TestPolicyLoosenedInThePullRequestIsIgnored(t *testing.T) {
	h := newHarness(t)
	h.repo.Checkout("main")
	h.repo.Branch("loosen")
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\nstreams:\n  duplicate_tolerant: [create-order]\npolicy:\n  max_shard_delta: 100\n  max_scale_factor: 10\n")
	h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 16, "create-order/audit": 16}))
	h.repo.Commit("scale and loosen the policy")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "loosen", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))
	body := h.theComment(pr)
	require.Contains(t, body, "(`shard_delta`)")
	require.Contains(t, body, "(`quiesce_attestation`)")
	require.Equal(t, "failure", h.check(prreport.CheckPlanPrefix+"streams", h.gh.PR(owner, repoName, pr.Number).HeadSHA).Conclusion)
}

// A bad .shardgate.yaml on the base branch is a failed check and a comment
// saying what to fix.
func TestBadRepoConfigIsReported(t *testing.T) {
	h := newHarness(t)
	h.repo.Checkout("main")
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - dir: streams\npolcy: {}\n")
	h.repo.Commit("break the config")
	pr := h.openPR("small", with(baseGroups, map[string]int{"payments/ledger": 3}))
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	body := h.theComment(pr)
	require.Contains(t, body, "`.shardgate.yaml` on the base branch is not valid")
	require.Contains(t, body, "4:1: polcy: unknown key (did you mean policy?)")
	check := h.check(prreport.CheckConfigName, head)
	require.Equal(t, "failure", check.Conclusion)
	require.Contains(t, check.Summary, "4:1: polcy: unknown key (did you mean policy?)")
}

// Fork pull requests are not run unless the server allows it; drafts wait.
func TestForksAndDrafts(t *testing.T) {
	h := newHarness(t)
	h.repo.Checkout("main")
	h.repo.Branch("fork-branch")
	h.writeRoot(with(baseGroups, map[string]int{"payments/ledger": 3}))
	h.repo.Commit("from a fork")
	fork := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "fork-branch", User: outsider, HeadRepo: "evil/streams"})
	p := h.gh.PRPayload(owner, repoName, fork.Number)
	h.run("pull_request", githubtest.PullRequestOpened(t, p))
	require.Contains(t, h.theComment(fork), "comes from a fork")
	runs := h.gh.CheckRuns(owner, repoName)
	require.Len(t, runs, 1, "no terraform ran: no project check")
	require.Equal(t, prreport.CheckGateName, runs[0].Name, "the aggregate check does not pass a head that was not planned")
	require.Equal(t, "failure", runs[0].Conclusion)

	h.repo.Checkout("main")
	h.repo.Branch("draft-branch")
	h.writeRoot(with(baseGroups, map[string]int{"payments/ledger": 3}))
	h.repo.Commit("draft")
	draft := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "draft-branch", User: author, Draft: true})
	h.run("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, draft.Number)))
	require.Contains(t, h.theComment(draft), "draft")
	require.Len(t, h.gh.CheckRuns(owner, repoName), 1, "a draft waits: no check of its own")
	h.comment(draft, author, "/shardgate plan")
	require.Contains(t, h.theComment(draft), "| `payments` | `ledger` | scale | 2 → 3 |")
}

// Unsigned webhooks store nothing; a redelivery runs once; queued jobs survive
// a stop and run after the restart.
func TestIntakeDurability(t *testing.T) {
	h := newHarness(t)
	h.repo.Checkout("main")
	h.repo.Branch("grow")
	h.writeRoot(with(baseGroups, map[string]int{"clicks/etl": 3}))
	h.repo.Commit("new group")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "grow", User: author})
	body := githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number))

	code, _ := h.deliver("pull_request", body, githubtest.WithSignature(""))
	require.Equal(t, 401, code)
	code, _ = h.deliver("pull_request", body, githubtest.WithSignature(githubtest.Sign("wrong", body)))
	require.Equal(t, 401, code)
	n, err := h.st.CountQueued(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)

	// Stop the workers, queue a delivery twice, "crash", restart.
	h.srv.Close(context.Background())
	code, first := h.deliver("pull_request", body, githubtest.WithDeliveryID("delivery-1"))
	require.Equal(t, 202, code)
	code, again := h.deliver("pull_request", body, githubtest.WithDeliveryID("delivery-1"))
	require.Equal(t, 202, code)
	require.Equal(t, "duplicate", again.Status)
	h.web.Close()
	h.started = false
	h.start()
	h.waitJob(first.JobID)
	require.Contains(t, h.theComment(pr), "| `clicks` | `etl` | create | 3 |")
	require.Equal(t, map[string]int{prreport.CheckPlanPrefix + "streams": 1, prreport.CheckGateName: 1}, checkRunNames(h), "the delivery ran once")
}

// A labeled webhook shardgate never received (it was down): who added the label
// comes from the issue events API, and it counts for the head it was added on.
func TestLabelOriginFromIssueEvents(t *testing.T) {
	h := newHarness(t)
	pr := h.openPR("medium", with(baseGroups, map[string]int{"payments/ledger": 8}))
	require.Contains(t, h.theComment(pr), "(`shard_delta`)")
	h.tick()
	h.gh.AddLabel(owner, repoName, pr.Number, "policy-exception/shard_delta", approver) // no webhook
	h.gh.AddLabel(owner, repoName, pr.Number, "policy-exception/no_destroy", author)    // no webhook
	h.comment(pr, approver, "/shardgate plan")
	body := h.theComment(pr)
	require.Contains(t, body, "`policy-exception/shard_delta` by "+approver+" waives `shard_delta`")
	require.Contains(t, body, "`policy-exception/no_destroy` by "+author+": added by the pull request's author")
}

// GitHub's secondary rate limit is waited out; the delivery still succeeds.
func TestSecondaryRateLimitIsRetried(t *testing.T) {
	h := newHarness(t)
	h.gh.FailNext("POST", "/repos/{owner}/{repo}/check-runs", 403, map[string]string{"Retry-After": "1"})
	pr := h.openPR("ledger", with(baseGroups, map[string]int{"payments/ledger": 3}))
	require.Equal(t, "failure", h.check(prreport.CheckPlanPrefix+"streams", h.gh.PR(owner, repoName, pr.Number).HeadSHA).Conclusion,
		"planned despite the rate limit (denied: no attestation)")
}

func TestHealthReadyMetrics(t *testing.T) {
	h := newHarness(t)
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready"} {
		resp, err := http.Get(h.web.URL + path)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, path)
		require.Contains(t, string(b), want, path)
	}
	h.deliver("ping", []byte(`{"zen":"x"}`))
	require.Contains(t, h.scrape(), `shardgate_webhook_deliveries_total{event="ping",outcome="pong"} 1`)
}

// An unreachable coordinator is said plainly and the policy fails closed, even
// for a change every rule would allow.
func TestCoordinatorUnreachableFailsClosed(t *testing.T) {
	h := newHarness(t)
	h.simSrv.Close()
	pr := h.openPR("new-group", with(baseGroups, map[string]int{"clicks/etl": 3}))
	body := h.theComment(pr)
	require.Contains(t, body, "The coordinator could not be reached")
	require.Contains(t, body, "(`coordinator_unreachable`)")
	require.NotContains(t, body, "password")
	require.Equal(t, "failure", h.check(prreport.CheckPlanPrefix+"streams", h.gh.PR(owner, repoName, pr.Number).HeadSHA).Conclusion)
}

// A push while another job of the same pull request runs: the comment says the
// new plan is queued, then the plan runs and the status reads done.
func TestQueuedPlanIsShown(t *testing.T) {
	h := newHarness(t)
	pr := h.openPR("queued", with(baseGroups, map[string]int{"payments/ledger": 3}))
	ref := pullreq.Ref{Installation: 1, Owner: owner, Repo: repoName, Number: pr.Number}
	unlock := h.srv.prLocks.Lock(ref.Key()) // another job of this PR is running
	before := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	h.repo.Checkout(pr.HeadRef)
	h.repo.WriteFile("streams/notes.md", "more\n")
	h.repo.Commit("another push")
	h.gh.SyncPR(owner, repoName, pr.Number)
	code, r := h.deliver("pull_request", githubtest.PullRequestSynchronize(t, h.gh.PRPayload(owner, repoName, pr.Number), before))
	require.Equal(t, 202, code)
	h.eventuallyComment(pr, "**Status:** queued: another shardgate job of this pull request is running")
	unlock()
	h.waitJob(r.JobID)
	require.Contains(t, h.theComment(pr), "**Status:** done: planned 1 project")
}

// A label whose labeled event was missed and that was added before the
// current head was pushed does not count: the push removes it, and says so.
func TestLabelFromIssueEventsBeforeThePushDoesNotCount(t *testing.T) {
	h := newHarness(t)
	pr := h.openPR("old-label", with(baseGroups, map[string]int{"payments/ledger": 8}))
	h.tick()
	h.gh.AddLabel(owner, repoName, pr.Number, "policy-exception/shard_delta", approver) // no webhook
	h.tick()                                                                            // GitHub times have whole seconds
	h.push(pr, func() { h.repo.WriteFile("streams/notes.md", "later\n") })
	body := h.theComment(pr)
	require.Contains(t, body, "Removed `policy-exception/shard_delta` (added by "+approver+" for ")
	require.NotContains(t, h.gh.Labels(owner, repoName, pr.Number), "policy-exception/shard_delta")
	require.Contains(t, body, "(`shard_delta`)")
}

// A pull request whose Terraform does not plan shows terraform's diagnostics
// whole: the file and line, the source, the detail; in the check run, and
// folded away in the comment.
func TestTerraformDiagnosticsReachTheCheckAndTheComment(t *testing.T) {
	h := newHarness(t)
	pr := h.openPRWith("broken", baseGroups, map[string]string{"streams/broken.tf": "variable \"region_name\" {\n  type = string\n}\n"})
	body := h.theComment(pr)
	require.Contains(t, body, "No value for required variable")
	require.Contains(t, body, "<details><summary>Terraform's diagnostics (1)</summary>")
	require.Contains(t, body, "❌ **Error** at `broken.tf:1`: No value for required variable")
	require.Contains(t, body, `The root module input variable "region_name" is not set`)

	check := h.check(prreport.CheckPlanPrefix+"streams", h.gh.PR(owner, repoName, pr.Number).HeadSHA)
	require.Equal(t, "failure", check.Conclusion)
	require.Contains(t, check.Summary, `broken.tf:1: No value for required variable: The root module input variable "region_name" is not set`)
	require.Contains(t, check.Text, "❌ **Error** at `broken.tf:1`: No value for required variable")
	require.Contains(t, check.Text, `1: variable "region_name" {`)
	require.NotContains(t, check.Text, "<details>", "the check run shows them open")

	// The runner told the metrics about each command, the failed plan too.
	require.EqualValues(t, 1, histCount(t, h.srv.registry, "shardgate_terraform_command_duration_seconds", "init", "ok"))
	require.EqualValues(t, 1, histCount(t, h.srv.registry, "shardgate_terraform_command_duration_seconds", "plan", "error"))
}

// A plan job says where its time went (issue 25's breakdown): each phase
// is observed once per job, every one this job went through with its time.
func TestPlanJobPhasesAreMeasured(t *testing.T) {
	h := newHarness(t)
	h.openPR("scale-create-order", with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	sums := histSumBy(t, h.srv.registry, "shardgate_plan_job_phase_seconds", "phase")
	for _, p := range phases.Names {
		require.EqualValues(t, 1, histCount(t, h.srv.registry, "shardgate_plan_job_phase_seconds", p), p)
		require.Greater(t, sums[p], 0.0, p)
	}
	require.Less(t, sums[phases.SandboxStart], sums[phases.Terraform])
}

// The gate's plan → policy path on terraform and on OpenTofu: a scale too
// far is denied with its rule, a configuration that does not plan shows
// the binary's diagnostics.
func TestPlanAndPolicyOnEachBinary(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, tf string) {
		h := newHarnessOn(t, tf)
		pr := h.openPR("scale-far", with(baseGroups, map[string]int{"create-order/billing": 16, "create-order/audit": 16}))
		body := h.theComment(pr)
		require.Contains(t, body, "| `create-order` | `billing` | scale | 4 → 16 |")
		require.Contains(t, body, "(`shard_delta`)")
		require.Equal(t, "failure", h.check(prreport.CheckPlanPrefix+"streams", h.gh.PR(owner, repoName, pr.Number).HeadSHA).Conclusion)

		broken := h.openPRWith("broken", baseGroups, map[string]string{"streams/broken.tf": "variable \"region_name\" {\n  type = string\n}\n"})
		require.Contains(t, h.theComment(broken), "❌ **Error** at `broken.tf:1`: No value for required variable")
	})
}

// A pull_request delivery handled after a newer one carries an older head:
// its job reads the pull request from GitHub instead of taking the event's
// copy, so the head does not go back.
func TestALateDeliveryDoesNotTakeTheHeadBack(t *testing.T) {
	h := newHarness(t)
	pr := h.openPR("late", with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	opened := githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number))
	before := len(h.gh.Requests())
	newer := h.push(pr, func() {
		h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 8, "create-order/audit": 8}))
	})
	require.NotContains(t, callsSince(h, before), "GET /repos/acme/streams/pulls/{id}", "the push's event is current")
	before = len(h.gh.Requests())
	h.run("pull_request", opened)
	require.Contains(t, callsSince(h, before), "GET /repos/acme/streams/pulls/{id}", "the late event is not")
	st, err := h.srv.rec.PR(context.Background(), h.ref(pr))
	require.NoError(t, err)
	require.Equal(t, newer, st.HeadSHA)
	require.Contains(t, h.theComment(pr), "**Head** `"+pullreq.ShortSHA(newer)+"`")
}
