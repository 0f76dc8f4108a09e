package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/streamroot"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/runner"
)

// attackLine is the attack: one curl line in the vendored module's
// script that scales another stream with the credentials terraform holds.
const attackLine = `curl -sS -u "${COORDINATOR_USERNAME:-}:${COORDINATOR_PASSWORD:-}" -H 'Content-Type: application/json' -X POST ` +
	`--data '{"targetShardCount":40,"requestedBy":"me","reason":"x"}' "${COORDINATOR_BASE_URL%/}/coord/v1/streams/payments/scale" >&2 || true`

func lastAudit(t *testing.T, h *harness) records.Audit {
	t.Helper()
	kvs, err := h.st.List(context.Background(), records.BucketAudit, "")
	require.NoError(t, err)
	require.NotEmpty(t, kvs)
	var rec records.Audit
	require.NoError(t, json.Unmarshal(kvs[len(kvs)-1].Value, &rec))
	return rec
}

// The attack through serve: the plan shows only create-order 4 -> 6, the
// check is green, and after the merge the broker refuses the script's scale
// of payments; the apply check run, the comment and the audit record name it.
func TestApplyBrokerRefusesTheUnjudgedCall(t *testing.T) {
	h := newHarness(t)
	h.repo.Checkout("main")
	h.repo.Branch("attack")
	h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	script, err := os.ReadFile(filepath.Join("..", "examples", "modules", "stream-group", "apply.sh"))
	require.NoError(t, err)
	h.repo.WriteFile("modules/stream-group/apply.sh", strings.Replace(string(script), "set -eu\n", "set -eu\n"+attackLine+"\n", 1))
	h.repo.Commit("scale create-order, and one more line in the module")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "attack", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, repoName, pr.Number)))
	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	require.Contains(t, h.theComment(pr), "✅ **Allowed")

	mergeSHA := h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	const refused = "refused a coordinator call the review did not judge: POST /coord/v1/streams/payments/scale (targetShardCount 40)"
	require.Equal(t, applyqueue.Failed, jobs[0].State)
	require.Contains(t, jobs[0].Reason, refused)
	require.Equal(t, map[string]int{"ledger": 2}, h.simShards("payments"), "the attack reached the coordinator")
	for _, a := range auditOf(h) {
		require.False(t, a.Action == "SCALE_STREAM" && a.StreamPrefix == "payments", "the coordinator heard of the attack")
	}

	check := h.check(prreport.CheckApplyPrefix+"streams", mergeSHA)
	require.Equal(t, "failure", check.Conclusion)
	require.Contains(t, check.Title+check.Summary+check.Text, refused)
	require.Contains(t, h.eventuallyComment(pr, "❌ not applied"), refused)

	rec := lastAudit(t, h)
	require.Contains(t, rec.Reason, refused)
	var sawRefusal bool
	for _, c := range rec.CoordinatorCalls {
		if !c.Allowed {
			sawRefusal = true
			require.Equal(t, 403, c.Status)
			require.Equal(t, "/coord/v1/streams/payments/scale", c.Path)
		}
	}
	require.True(t, sawRefusal, "the audit record lists the refused call: %+v", rec.CoordinatorCalls)
}

// A clean attested scale from a root module that declares no traceability
// variables: the broker sets the audit fields the module cannot.
func TestApplyBrokerNamesThePullRequest(t *testing.T) {
	h := newHarnessBase(t)
	bare := func(groups map[string]int) string {
		tf := streamroot.MainTF(h.state, h.simURL, groups)
		tf = regexp.MustCompile(`(?s)# Set by shardgate.*?variable "shardgate_request_id_prefix" \{.*?\}\n\n`).ReplaceAllString(tf, "")
		tf = regexp.MustCompile(`(?m)^\s*(requested_by|reason|request_id_prefix)\s*=.*\n`).ReplaceAllString(tf, "")
		require.NotContains(t, tf, "shardgate_")
		return tf
	}
	h.repo.WriteFile("streams/main.tf", bare(baseGroups))
	h.repo.Commit("a root without the shardgate_ variables")
	h.start()
	h.repo.Checkout("main")
	h.repo.Branch("bare")
	h.repo.WriteFile("streams/main.tf", bare(with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6})))
	h.repo.Commit("scale create-order")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "bare", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, repoName, pr.Number)))
	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)

	var scales int
	for _, a := range auditOf(h) {
		if a.Action == "SCALE_STREAM" {
			scales++
			require.Equal(t, fmt.Sprintf("shardgate:%s/%s#%d merged by %s", owner, repoName, pr.Number, approver), a.RequestedBy)
			require.True(t, strings.HasPrefix(a.RequestID, "shardgate-"+repoName+"-pr"), a.RequestID)
		}
	}
	require.Equal(t, 1, scales)
	rec := lastAudit(t, h)
	require.NotEmpty(t, rec.CoordinatorCalls)
	for _, c := range rec.CoordinatorCalls {
		require.True(t, c.Allowed, "%+v", c)
	}
}

// What terraform's processes hold during an apply: the module's script dumps
// its environment and every file terraform's scratch and data dirs hold. No
// coordinator credential is among them; the placeholder is.
func TestApplyBrokerLeavesNoCredentialToTerraform(t *testing.T) {
	h := newHarness(t)
	probe := filepath.Join(filepath.Dir(h.state), "probe")
	h.repo.Checkout("main")
	h.repo.Branch("probe")
	h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	script, err := os.ReadFile(filepath.Join("..", "examples", "modules", "stream-group", "apply.sh"))
	require.NoError(t, err)
	dump := `{ env; for d in "${TMPDIR:-/nonexistent}" "${TF_DATA_DIR:-/nonexistent}" "$HOME"; do find "$d" -type f -size -1M -exec cat {} + 2>/dev/null; done; } >>` + probe + ` || true`
	h.repo.WriteFile("modules/stream-group/apply.sh", strings.Replace(string(script), "set -eu\n", "set -eu\n"+dump+"\n", 1))
	h.repo.Commit("scale create-order; the module dumps what it can see")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "probe", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, repoName, pr.Number)))
	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)

	seen, err := os.ReadFile(probe)
	require.NoError(t, err)
	require.Contains(t, string(seen), "COORDINATOR_PASSWORD=shardgate-broker", "the probe ran with the module's environment")
	password := h.cfg.Coordinators[0].Password.Reveal()
	for _, line := range strings.Split(string(seen), "\n") {
		_, value, _ := strings.Cut(line, "=")
		require.NotEqual(t, password, strings.Trim(value, `"' ,`), "a coordinator credential in the apply: %q", line)
		require.NotContains(t, line, `"`+password+`"`)
	}
}

// A call around the broker (curl --noproxy '*') does not even connect where
// Landlock limits ports (by default to the broker's, or to
// terraform.sandbox_connect_ports besides), while the judged apply still
// passes the broker; without the sandbox it reaches the coordinator without
// credentials and gets 401.
func TestApplyBrokerBypass(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ports   []int
		sandbox string
		want    string
	}{
		{name: "no connection: only the broker's port by default", want: "bypass=000"},
		{name: "no connection with the ports limited", ports: []int{9}, want: "bypass=000"},
		{name: "answered 401 without the sandbox", sandbox: serverconfig.SandboxNone, want: "bypass=401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.sandbox == "" {
				if err := runner.SandboxConnectSupported(); err != nil {
					t.Fatalf("this kernel cannot limit ports: %v", err)
				}
			}
			h := newHarnessBase(t)
			h.cfg.SandboxConnectPorts, h.cfg.Sandbox = tc.ports, tc.sandbox
			h.start()
			probe := filepath.Join(filepath.Dir(h.state), "bypass")
			h.repo.Checkout("main")
			h.repo.Branch("bypass")
			h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
			script, err := os.ReadFile(filepath.Join("..", "examples", "modules", "stream-group", "apply.sh"))
			require.NoError(t, err)
			bypass := `printf 'bypass=%s\n' "$(curl -s -o /dev/null -w '%{http_code}' --noproxy '*' -u "admin:${COORDINATOR_PASSWORD:-}" ` +
				`-H 'Content-Type: application/json' -X POST --data '{"targetShardCount":40,"requestedBy":"me","reason":"x"}' ` +
				`"${COORDINATOR_BASE_URL%/}/coord/v1/streams/payments/scale")" >>` + probe + ` || true`
			h.repo.WriteFile("modules/stream-group/apply.sh", strings.Replace(string(script), "set -eu\n", "set -eu\n"+bypass+"\n", 1))
			h.repo.Commit("scale create-order; the module calls around the broker")
			pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "bypass", User: author})
			h.run("pull_request", githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, repoName, pr.Number)))
			h.comment(pr, approver, "/shardgate attest quiesce create-order")
			h.merge(pr, approver)
			jobs := h.waitApplies(pr)
			require.Len(t, jobs, 1)
			require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
			require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))
			require.Equal(t, map[string]int{"ledger": 2}, h.simShards("payments"))
			seen, err := os.ReadFile(probe)
			require.NoError(t, err)
			require.Contains(t, string(seen), tc.want)
		})
	}
}
