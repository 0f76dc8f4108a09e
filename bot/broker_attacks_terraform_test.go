package bot

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/internal/testing/canarytest"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Issue 32's attacks through serve, with the real terraform, the upstream
// stream-group module and the simulator.

// moduleScript is the vendored module's apply.sh, changed by edit.
func moduleScript(t *testing.T, edit func(string) string) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("..", "examples", "modules", "stream-group", "apply.sh"))
	require.NoError(t, err)
	out := edit(string(script))
	require.NotEqual(t, string(script), out, "the edit changed nothing")
	return out
}

// mergeAttestedScale opens a PR that scales create-order 4 -> 6 with the
// given module script, attests it, merges it and returns its apply job.
func (h *harness) mergeAttestedScale(branch, script string, files map[string]string) (githubtest.PullRequest, *applyqueue.Job) {
	h.t.Helper()
	all := map[string]string{"modules/stream-group/apply.sh": script}
	for k, v := range files {
		all[k] = v
	}
	pr := h.openPRWith(branch, with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}), all)
	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	require.Contains(h.t, h.theComment(pr), "✅ **Allowed")
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(h.t, jobs, 1)
	return pr, jobs[0]
}

// A judged scale whose body also carries the count under a key the
// simulator's decoder (Go's, case-insensitive) takes, or the key twice: the
// broker refuses it, the apply fails naming it, and the simulator's count
// stays where it was.
func TestApplyBrokerForwardsOnlyTheJudgedCount(t *testing.T) {
	for _, tc := range []struct{ name, extra string }{
		{"case-folded key", `\"targetshardcount\":40,`},
		{"duplicate key", `\"targetShardCount\":40,`},
		{"long s", `\"target\\u017fhardCount\":40,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			script := moduleScript(t, func(s string) string {
				return strings.Replace(s, `"{\"targetShardCount\":$count,`, `"{\"targetShardCount\":$count,`+tc.extra, 1)
			})
			_, job := h.mergeAttestedScale("twin", script, nil)
			require.Equal(t, applyqueue.Failed, job.State)
			require.Contains(t, job.Reason, "refused a coordinator call the review did not judge: POST /coord/v1/streams/create-order/scale")
			require.Equal(t, map[string]int{"billing": 4, "audit": 4}, h.simShards("create-order"), "the simulator acted on the body")
			for _, a := range auditOf(h) {
				require.False(t, a.Action == "SCALE_STREAM", "the coordinator heard a scale: %+v", a)
			}
			var refused []string
			for _, c := range lastAudit(t, h).CoordinatorCalls {
				if !c.Allowed {
					refused = append(refused, c.Reason)
				}
			}
			require.Len(t, refused, 1)
			require.Contains(t, refused[0], "its body has the key")
		})
	}
}

// hostAddress is an address of this host other than loopback, which Go's
// and terraform's HTTP clients send through the proxy (the issue's /etc/hosts
// alias of the host comes to the same).
func hostAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatal("this host has no address but loopback: the attack needs one")
	return ""
}

// At plan time, before any review, the PR's root reads Terraform state over
// HTTP (terraform's own http backend, no provider): from a listener on the
// host's address, which goes through the broker and gets 403, and from one
// on loopback, which terraform connects to directly and Landlock stops. The
// canaries hear nothing; the plan's log says why.
func TestPlanReachesOnlyTheEgressList(t *testing.T) {
	if err := runner.SandboxConnectSupported(); err != nil {
		t.Fatalf("this kernel cannot limit ports, which this test checks: %v", err)
	}
	h := newHarnessBase(t)
	h.cfg.Status = serverconfig.StatusConfig{Listen: "127.0.0.1:0"}
	h.start()
	viaProxy, heardProxy := canarytest.Listen(t, hostAddress(t))
	direct, heardDirect := canarytest.Listen(t, "127.0.0.1")
	probe := fmt.Sprintf(`data "terraform_remote_state" "via_proxy" {
  backend = "http"
  config  = { address = "http://%s/state" }
}

data "terraform_remote_state" "direct" {
  backend = "http"
  config  = { address = "http://%s/state" }
}
`, viaProxy, direct)
	pr := h.openPRWith("probe", with(baseGroups, map[string]int{"clicks/etl": 3}), map[string]string{"streams/probe.tf": probe})
	require.NotContains(t, h.theComment(pr), "✅ **Allowed")
	require.Zero(t, heardProxy.Load(), "the broker relayed the plan's request")
	require.Zero(t, heardDirect.Load(), "the plan connected around the broker")
	planLog, ok := h.srv.liveLogs.Get("plan-1")
	require.True(t, ok)
	require.Contains(t, strings.Join(planLog.Read(0).Lines, "\n"), "shardgate broker: refused GET "+viaProxy+": not in terraform.egress")
}

// At apply time the module's script tries the host's address through the
// proxy (plain and CONNECT), the metadata address, and the status page
// (served without a token on loopback) through the proxy and around it:
// 403 from the broker, no connection around it; the canary hears nothing
// and the judged apply still passes.
func TestApplyReachesOnlyTheEgressList(t *testing.T) {
	if err := runner.SandboxConnectSupported(); err != nil {
		t.Fatalf("this kernel cannot limit ports, which this test checks: %v", err)
	}
	h := newHarnessBase(t)
	h.cfg.Status = serverconfig.StatusConfig{Listen: "127.0.0.1:0"}
	h.start()
	stop, err := h.srv.startStatus()
	require.NoError(t, err)
	t.Cleanup(stop)
	target, heard := canarytest.Listen(t, hostAddress(t))
	probe := filepath.Join(filepath.Dir(h.state), "egress")
	lines := ""
	for _, p := range []struct{ name, args string }{
		{"proxied", `-w '%{http_code}' http://` + target + `/`},
		{"tunnel", `-p -w '%{http_connect}' http://` + target + `/`},
		{"metadata", `-w '%{http_code}' http://169.254.169.254/latest/meta-data/`},
		{"status_proxied", `-x "$http_proxy" -w '%{http_code}' http://` + h.srv.statusAddr + `/`},
		{"status_direct", `--noproxy '*' -w '%{http_code}' http://` + h.srv.statusAddr + `/`},
	} {
		lines += fmt.Sprintf(`printf '%s=%%s\n' "$(curl -s -o /dev/null --max-time 10 %s)" >>%s || true`+"\n", p.name, p.args, probe)
	}
	script := moduleScript(t, func(s string) string { return strings.Replace(s, "set -eu\n", "set -eu\n"+lines, 1) })
	_, job := h.mergeAttestedScale("egress", script, nil)
	require.Equal(t, applyqueue.Applied, job.State, job.Reason)
	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))
	seen, err := os.ReadFile(probe)
	require.NoError(t, err)
	for _, want := range []string{"proxied=403", "tunnel=403", "metadata=403", "status_proxied=403", "status_direct=000"} {
		require.Contains(t, string(seen), want+"\n")
	}
	require.Zero(t, heard.Load(), "the canary heard from the apply")
}

// A module that polls the coordinator 20,000 times leaves a bounded audit
// record: every mutation, the first reads, and the count of the others.
func TestApplyAuditRecordIsBounded(t *testing.T) {
	h := newHarness(t)
	const reads = 20000
	poll := fmt.Sprintf(`curl -s -o /dev/null "${COORDINATOR_BASE_URL%%/}/coord/v1/monitoring/health?n=[1-%d]" >/dev/null || true`, reads)
	script := moduleScript(t, func(s string) string { return strings.Replace(s, "set -eu\n", "set -eu\n"+poll+"\n", 1) })
	_, job := h.mergeAttestedScale("poll", script, nil)
	require.Equal(t, applyqueue.Applied, job.State, job.Reason)
	rec := lastAudit(t, h)
	var mutations int
	for _, c := range rec.CoordinatorCalls {
		if c.Method != "GET" {
			mutations++
		}
	}
	require.Positive(t, mutations, "the judged calls are kept")
	require.LessOrEqual(t, len(rec.CoordinatorCalls), coordbroker.MaxReads+mutations)
	require.GreaterOrEqual(t, rec.OmittedCoordinatorReads, reads-coordbroker.MaxReads)
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	require.Less(t, len(b), 256<<10, "the audit record's size")
}
