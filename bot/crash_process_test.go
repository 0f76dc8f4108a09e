package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// serveProcess is `shardgate serve` as a real process.
type serveProcess struct {
	t    testing.TB
	bin  string
	cfg  string
	url  string
	cmd  *exec.Cmd
	logs *lockedBuffer
}

// lockedBuffer collects a child process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func buildShardgate(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shardgate")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/shardgate").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// writeServeConfig writes the harness's configuration as a server config file.
func writeServeConfig(t testing.TB, h *harness, listen string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	key := write("app.pem", string(h.gh.AppPrivateKeyPEM()))
	secret := write("webhook-secret", testSecret)
	coordPW := write("coord-password", "password")
	return write("server.yaml", fmt.Sprintf(`version: 1
listen: %s
github:
  api_url: %s
  app_id: %d
  private_key_file: %s
  webhook_secret_file: %s
store:
  path: %s
terraform:
  binary: %s
  work_dir: %s
  sandbox_writable: [%q]
coordinators:
  - url_prefix: %s
    username: admin
    password_file: %s
approvers:
  users: [%s]
  teams: [acme/sre]
apply:
  lease: 3s
  convergence_timeout: 2m
`, listen, h.gh.URL(), h.gh.AppID(), key, secret, h.cfg.StorePath, h.cfg.TerraformBinary, t.TempDir(), h.cfg.SandboxWritable[0], h.simURL, coordPW, approver))
}

func (p *serveProcess) start() {
	p.t.Helper()
	p.logs = &lockedBuffer{}
	p.cmd = exec.Command(p.bin, "serve", "--config", p.cfg)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	require.NoError(p.t, p.cmd.Start())
	require.Eventually(p.t, func() bool {
		resp, err := http.Get(p.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 30*time.Second, 50*time.Millisecond, "shardgate serve did not become ready: %s", p.logs)
}

// startServe runs `shardgate serve` with h's configuration, stopped with
// SIGTERM at the end of the test unless it already ended.
func startServe(t *testing.T, h *harness) *serveProcess {
	t.Helper()
	listen := freePort(t)
	p := &serveProcess{t: t, bin: buildShardgate(t), cfg: writeServeConfig(t, h, listen), url: "http://" + listen}
	p.start()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			_ = p.cmd.Wait()
		}
	})
	return p
}

func (p *serveProcess) kill9() {
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGKILL))
	_ = p.cmd.Wait()
}

func (p *serveProcess) deliver(event string, body []byte) {
	p.t.Helper()
	resp, err := githubtest.Deliver(p.url+"/webhook", event, body, testSecret)
	require.NoError(p.t, err)
	resp.Body.Close()
	require.Equal(p.t, 202, resp.StatusCode)
}

// The service is killed with SIGKILL in the middle of terraform apply (a
// replace cut between its destroy and its create, coordinator calls in
// flight): once the simulator has recorded the apply's first write and
// before it records the scale, which the test checks at the kill. Restarted on the same store, it takes the job over when the lease
// expires, re-plans from the current state (never the stale plan), applies the
// same end state once and converges: the coordinator sees one stream scale.
func TestKilledMidApplyResumesOnce(t *testing.T) {
	tftest.Binary(t)
	h := newProcessHarnessBase(t)
	p := startServe(t, h)

	h.repo.Checkout("main")
	h.repo.Branch("scale")
	h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	h.repo.Commit("scale create-order to 6")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "scale", User: author})
	p.deliver("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))
	h.eventuallyComment(pr, "(`quiesce_attestation`)")
	h.tick()
	c := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate attest quiesce create-order")
	p.deliver("issue_comment", githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{InstallationID: 1, Owner: owner, Repo: repoName,
		RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number, Author: author, CommentID: c.ID, Body: c.Body, User: approver}))
	h.eventuallyComment(pr, "✅ **Allowed")

	// Slow coordinator: terraform apply's steps take seconds each.
	h.sim.SetDelay(1500 * time.Millisecond)
	h.repo.Checkout("main")
	sha := h.repo.Merge("scale", "Merge pull request #1")
	h.gh.MergePR(owner, repoName, pr.Number, approver, sha)
	merged := h.gh.PRPayload(owner, repoName, pr.Number)
	merged.Sender = approver
	mark := len(h.sim.Audit())
	p.deliver("pull_request", githubtest.PullRequestClosedMergedSynthetic(t, merged, approver, sha, h.clock.Now()))
	// Kill on an observed event: terraform apply has replaced a group and its
	// create step has called the coordinator (the module's CREATE_GROUP, the
	// first write after the merge). Its routing read and its scale take 1.5s
	// each from here.
	require.Eventually(t, func() bool {
		return countActions(h.sim.Audit()[mark:], coordsim.ActionCreateGroup) > 0
	}, 2*time.Minute, 10*time.Millisecond, "terraform apply never called the coordinator: %s", p.logs)
	p.kill9()
	atKill := h.sim.Audit()[mark:]
	require.Zero(t, countActions(atKill, coordsim.ActionScaleStream),
		"the kill landed mid-apply: after terraform apply's first coordinator write, before its scale: %+v", atKill)

	h.sim.SetDelay(0)
	p.start()
	body := h.eventuallyComment(pr, "✅ applied")
	require.Contains(t, body, "merged and applied (1 project)")
	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))
	scales := 0
	for _, a := range auditOf(h) {
		if a.Action == "SCALE_STREAM" && a.StreamPrefix == "create-order" {
			scales++
		}
	}
	require.Equal(t, 1, scales, "the coordinator saw exactly one scale of the stream: %+v", auditOf(h))
	require.Equal(t, "success", h.check(prreport.CheckApplyPrefix+"streams", sha).Conclusion)
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		if c.HeadSHA == sha {
			require.Equal(t, "completed", c.Status, "the resumed apply finished the check run it started: %+v", c)
		}
	}
	require.Contains(t, p.logs.String(), "apply job started", "the restarted process took the job over")

	// The store shows one applied outcome, from the attempt that resumed.
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, p.cmd.Wait())
	st, err := store.OpenBolt(h.cfg.StorePath)
	require.NoError(t, err)
	defer st.Close()
	kvs, err := st.List(context.Background(), records.BucketAudit, "")
	require.NoError(t, err)
	require.Len(t, kvs, 1, "one audit record: the killed attempt never finished")
	var rec records.Audit
	require.NoError(t, json.Unmarshal(kvs[0].Value, &rec))
	require.Equal(t, string(applyqueue.Applied), rec.Outcome)
	require.GreaterOrEqual(t, rec.Attempt, 2, "applied by the resumed attempt")
}

// countActions counts the audit events of one coordinator action.
func countActions(events []coordsim.AuditEvent, action string) int {
	n := 0
	for _, e := range events {
		if e.Action == action {
			n++
		}
	}
	return n
}

// workDirOf reads the work dir a serve config names.
func workDirOf(t *testing.T, cfgPath string) string {
	t.Helper()
	b, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "work_dir: "); ok {
			return v
		}
	}
	t.Fatal("no work_dir in the config")
	return ""
}

// The service is killed with SIGKILL while a plan's check run is in progress
// (the coordinator is slow to answer the live-state read) and the checkout
// and terraform scratch are on disk. Restarted, it removes them, plans again
// and finishes that same check run: none stays in progress, none is doubled.
func TestKilledMidPlanFinishesItsCheckRun(t *testing.T) {
	tftest.Binary(t)
	h := newProcessHarnessBase(t)
	listen := freePort(t)
	cfg := writeServeConfig(t, h, listen)
	p := &serveProcess{t: t, bin: buildShardgate(t), cfg: cfg, url: "http://" + listen}
	p.start()
	defer func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			_ = p.cmd.Wait()
		}
	}()

	h.repo.Checkout("main")
	h.repo.Branch("scale")
	h.writeRoot(with(baseGroups, map[string]int{"payments/ledger": 3}))
	h.repo.Commit("scale payments")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "scale", User: author})
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	h.sim.SetDelay(time.Hour) // the live-state read never answers in time
	calls := h.simCalls.Load()
	p.deliver("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))
	// terraform has planned; shardgate reads the live state, its check run in progress.
	require.Eventually(t, func() bool { return h.simCalls.Load() > calls }, time.Minute, 20*time.Millisecond)
	inProgress := map[string]int{}
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		if c.HeadSHA == head && c.Status == "in_progress" {
			inProgress[c.Name]++
		}
	}
	require.Equal(t, map[string]int{prreport.CheckPlanPrefix + "streams": 1, prreport.CheckGateName: 1}, inProgress,
		"the plan's check run and the aggregate one are in progress")
	runs, err := filepath.Glob(filepath.Join(workDirOf(t, cfg), "run-*"))
	require.NoError(t, err)
	require.Len(t, runs, 1)
	p.kill9()
	dead := runs[0]
	_, err = os.Stat(dead)
	require.NoError(t, err, "the killed process's run dir is still there")

	h.sim.SetDelay(0)
	p.start()
	body := h.eventuallyComment(pr, "done: planned 1 project")
	require.Contains(t, body, "`payments`")
	// The comment is edited before the aggregate check is completed: wait
	// for every check run on the head to finish before counting them.
	byName := map[string][]githubtest.CheckRun{}
	require.Eventually(t, func() bool {
		byName = map[string][]githubtest.CheckRun{}
		done := true
		for _, c := range h.gh.CheckRuns(owner, repoName) {
			if c.HeadSHA == head {
				byName[c.Name] = append(byName[c.Name], c)
				done = done && c.Status == "completed"
			}
		}
		return done
	}, time.Minute, 20*time.Millisecond, "every check run on the head completes")
	require.Len(t, byName, 2, "the plan's and the aggregate check run, no other: %+v", byName)
	for name, runs := range byName {
		require.Len(t, runs, 1, "the check run %q in progress at the kill was taken over: %+v", name, runs)
		require.Equal(t, "completed", runs[0].Status, name)
	}
	_, err = os.Stat(dead)
	require.ErrorIs(t, err, os.ErrNotExist, "the restart removed the dead process's checkout and scratch")
}
