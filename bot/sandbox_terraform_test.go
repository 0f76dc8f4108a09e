package bot

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/terraform/runner"
)

// openPRWith is openPR with extra files in the pull request's commit.
func (h *harness) openPRWith(branch string, groups map[string]int, files map[string]string) githubtest.PullRequest {
	h.t.Helper()
	h.repo.Checkout("main")
	h.repo.Branch(branch)
	h.writeRoot(groups)
	for name, content := range files {
		h.repo.WriteFile(name, content)
	}
	h.repo.Commit("change streams on " + branch)
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: branch, User: author})
	h.run("pull_request", githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, repoName, pr.Number)))
	return pr
}

// stateProbe serves an empty Terraform state over HTTP and records the
// password of every request: terraform's http backend takes it from
// TF_HTTP_PASSWORD, so it shows which phase's credentials a run had.
type stateProbe struct {
	srv *httptest.Server
	mu  sync.Mutex
	pws []string
}

func newStateProbe(t *testing.T) *stateProbe {
	p := &stateProbe{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pw, _ := r.BasicAuth()
		p.mu.Lock()
		p.pws = append(p.pws, pw)
		p.mu.Unlock()
		fmt.Fprint(w, `{"version":4,"terraform_version":"1.5.7","serial":1,"lineage":"probe","outputs":{},"resources":[]}`)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *stateProbe) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Compact(slices.Sorted(slices.Values(p.pws)))
}

// tf reads the probe at plan time, as a remote-state data source would.
func (p *stateProbe) tf() string {
	return fmt.Sprintf(`data "terraform_remote_state" "probe" {
  backend = "http"
  config  = { address = %q }
}
`, p.srv.URL+"/state")
}

// TestPhaseCredentials: a pull request's plan gets terraform.plan_env and
// never terraform.apply_env; the apply of the merge commit gets apply_env.
func TestPhaseCredentials(t *testing.T) {
	probe := newStateProbe(t)
	h := newHarnessBase(t)
	h.cfg.PlanEnv = map[string]serverconfig.Secret{"TF_HTTP_USERNAME": serverconfig.NewSecret("reader"), "TF_HTTP_PASSWORD": serverconfig.NewSecret("plan-phase-pw")}
	h.cfg.ApplyEnv = map[string]serverconfig.Secret{"TF_HTTP_USERNAME": serverconfig.NewSecret("writer"), "TF_HTTP_PASSWORD": serverconfig.NewSecret("apply-phase-pw")}
	// The backend is on loopback, which terraform reaches directly: its port
	// is listed, as an operator would (terraform.sandbox_connect_ports).
	h.cfg.SandboxConnectPorts = []int{probe.srv.Listener.Addr().(*net.TCPAddr).Port}
	h.start()

	pr := h.openPRWith("probe", with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}),
		map[string]string{"streams/probe.tf": probe.tf()})
	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	body := h.theComment(pr)
	require.Contains(t, body, "✅ **Allowed", body)
	require.Equal(t, []string{"plan-phase-pw"}, probe.seen(), "the PR plan had the plan credentials only")

	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Equal(t, []string{"apply-phase-pw", "plan-phase-pw"}, probe.seen(), "the merge commit's re-plan and apply had the apply credentials")
	for _, c := range h.gh.Comments(owner, repoName, pr.Number) {
		require.NotContains(t, c.Body, "phase-pw")
	}
}

// TestPRCannotReadServerFiles is the attack of issue 10 through the whole
// service: a same-repository PR puts a server file into a value it plans.
func TestPRCannotReadServerFiles(t *testing.T) {
	key := filepath.Join(t.TempDir(), "app-key.pem")
	const material = "MIIEpAIBAAKCAQEA0server0key0material"
	require.NoError(t, os.WriteFile(key, []byte(material), 0o600))
	h := newHarness(t)
	pr := h.openPRWith("leak", baseGroups, map[string]string{"streams/leak.tf": fmt.Sprintf(`resource "terraform_data" "leak" {
  input = file(%q)
}
`, key)})
	body := strings.Join(strings.Fields(h.theComment(pr)), " ")
	// file() failed (permission denied, in the plan's output): nothing was read.
	require.Contains(t, body, "terraform plan failed (exit 1): leak.tf:2: Invalid function argument")
	require.NotContains(t, body, material)
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	check := h.check(prreport.CheckPlanPrefix+"streams", head)
	require.NotEqual(t, "success", check.Conclusion)
	require.NotContains(t, check.Summary+check.Text, material)
}

// TestNoSandboxNoPlan: where the kernel cannot confine terraform, the
// default configuration plans nothing and says why; terraform.sandbox: none
// plans unconfined, and says that.
func TestNoSandboxNoPlan(t *testing.T) {
	old := sandboxSupported
	t.Cleanup(func() { sandboxSupported = old })
	sandboxSupported = func() error { return errors.New("landlock is not available on this kernel") }

	h := newHarness(t)
	pr := h.openPR("scale", with(baseGroups, map[string]int{"create-order/billing": 6}))
	body := h.theComment(pr)
	require.Contains(t, body, "not planned: this shardgate server cannot sandbox Terraform (landlock is not available on this kernel)")
	require.Contains(t, body, "`terraform.sandbox: none`")
	require.NotContains(t, body, "| `create-order` | `billing` |", "nothing was planned")
	require.Empty(t, h.srv.planner.SandboxNotice())
	require.Equal(t, h.srv.sandboxErr, h.srv.applier.SandboxErr, "nor applied (bot/apply's TestNoSandboxNoApply)")

	h2 := newHarnessBase(t)
	h2.cfg.Sandbox = serverconfig.SandboxNone
	h2.start()
	pr = h2.openPR("scale", with(baseGroups, map[string]int{"create-order/billing": 6}))
	require.Contains(t, h2.theComment(pr), "| `create-order` | `billing` | scale | 4 → 6 |")
	require.Contains(t, h2.theComment(pr), "Plans run unsandboxed", "every comment says plans run unsandboxed")
}

// TestPRDaemonDiesWithTheApply is issue 32's attack through the service: a
// pull request's resource starts a setsid nohup daemon when it is applied,
// in the shared state directory it may write. The daemon is gone (checked by
// pid) when the apply is reported, and the status page and the start-up log
// say how jobs' processes are ended; the page shows apply.max_concurrent too.
func TestPRDaemonDiesWithTheApply(t *testing.T) {
	h := newHarnessBase(t)
	h.cfg.Status = serverconfig.StatusConfig{Listen: "127.0.0.1:0", Token: serverconfig.NewSecret(statusToken)}
	h.cfg.ApplyMaxConcurrent = 3
	h.start()
	stop, err := h.srv.startStatus()
	require.NoError(t, err)
	t.Cleanup(stop)
	require.Equal(t, runner.ContainCgroup, h.srv.runner.Containment().Mechanism, "this host must offer a cgroup v2: %s", h.srv.runner.Containment())

	pidFile := filepath.Join(filepath.Dir(h.state), "daemon.pid")
	pr := h.openPRWith("daemon", baseGroups, map[string]string{"streams/daemon.tf": `resource "terraform_data" "daemon" {
  provisioner "local-exec" {
    command = "setsid nohup sh -c 'echo $$ > ` + pidFile + `; exec sleep 3600' >/dev/null 2>&1 </dev/null & while [ ! -s ` + pidFile + ` ]; do sleep 0.05; done"
  }
}
`})
	require.Contains(t, h.theComment(pr), "✅ **Allowed", h.theComment(pr))
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err, "the daemon started")
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	alive := func() bool {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		fields := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		return len(fields) > 0 && fields[0] != "Z" // a zombie is dead, waiting for pid 1
	}
	t.Cleanup(func() {
		if alive() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	require.False(t, alive(), "the PR's daemon (pid %d) outlived its apply", pid)

	code, body := statusGet(t, h.srv, "/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "<th>processes of a job</th><td>a cgroup v2 per job under ")
	require.Contains(t, body, "<th>apply.max_concurrent</th><td>at most 3 applies at once on this replica")
	var said bool
	for line := range strings.Lines(h.logs.String()) {
		said = said || strings.Contains(line, `"process_containment":"cgroup"`) && strings.Contains(line, "cgroup.kill")
	}
	require.True(t, said, "the start-up log says how jobs' processes end")
}
