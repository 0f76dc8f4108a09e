package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/store/storeopen"
	"github.com/shardgate/shardgate/store/storetest"
)

// Short leases keep the takeovers of these tests quick.
const (
	replicaJobLease   = time.Second
	replicaApplyLease = 3 * time.Second
)

// replicaSet is several `shardgate serve` processes on one PostgreSQL
// schema, and the test's own view of that store.
type replicaSet struct {
	t     *testing.T
	h     *harness
	procs []*serveProcess
	st    *store.Postgres
	queue *applyqueue.Queue
}

// startReplicas builds shardgate and starts n replicas sharing one database
// schema, each with its own listener and work dir.
func startReplicas(t *testing.T, h *harness, n int) *replicaSet {
	t.Helper()
	url := storetest.PostgresURL(t)
	urlFile := filepath.Join(t.TempDir(), "postgres-url")
	require.NoError(t, os.WriteFile(urlFile, []byte(url), 0o600))
	bin := buildShardgate(t)
	rs := &replicaSet{t: t, h: h, st: storeopen.PostgresAt(t, url, replicaJobLease)}
	rs.queue = applyqueue.New(rs.st, "test-observer", replicaApplyLease, nil)
	for range n {
		listen := freePort(t)
		cfgPath := writeServeConfig(t, h, listen)
		b, err := os.ReadFile(cfgPath)
		require.NoError(t, err)
		cfg := strings.Replace(string(b), "store:\n  path: "+h.cfg.StorePath+"\n",
			fmt.Sprintf("store:\n  postgres_url_file: %s\n  lease: %s\n", urlFile, replicaJobLease), 1)
		cfg = strings.Replace(cfg, "  lease: 3s\n", fmt.Sprintf("  lease: %s\n", replicaApplyLease), 1)
		require.NotEqual(t, string(b), cfg)
		require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
		p := &serveProcess{t: t, bin: bin, cfg: cfgPath, url: "http://" + listen}
		p.start()
		rs.procs = append(rs.procs, p)
	}
	t.Cleanup(func() {
		for _, p := range rs.procs {
			if p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Signal(syscall.SIGCONT)
				_ = p.cmd.Process.Signal(syscall.SIGTERM)
				_ = p.cmd.Wait()
			}
		}
		if t.Failed() {
			for i, p := range rs.procs {
				t.Logf("replica %d logs:\n%s", i, p.logs)
			}
		}
	})
	return rs
}

// holder is the replica whose process holds the apply job's lease.
func (rs *replicaSet) holder(j *applyqueue.Job) *serveProcess {
	for _, p := range rs.procs {
		if p.cmd.ProcessState == nil && ownerPid(j.LeaseOwner) == p.cmd.Process.Pid {
			return p
		}
	}
	return nil
}

// ownerPid reads the pid out of a processOwner name (host-pid-random).
func ownerPid(owner string) int {
	parts := strings.Split(owner, "-")
	if len(parts) < 3 {
		return 0
	}
	pid, _ := strconv.Atoi(parts[len(parts)-2])
	return pid
}

// onlyApply waits until the queue holds one job and it matches ok.
func (rs *replicaSet) onlyApply(what string, timeout time.Duration, ok func(j *applyqueue.Job) bool) *applyqueue.Job {
	rs.t.Helper()
	var got *applyqueue.Job
	require.Eventually(rs.t, func() bool {
		jobs, err := rs.queue.List(context.Background())
		if err != nil || len(jobs) != 1 {
			return false
		}
		got = jobs[0]
		return ok(got)
	}, timeout, 20*time.Millisecond, "apply job never %s: %+v", what, got)
	return got
}

// planAndApprove opens a pull request scaling create-order to 6 on one
// replica and attests on another, until it is allowed.
func (rs *replicaSet) planAndApprove() githubtest.PullRequest {
	t, h := rs.t, rs.h
	h.repo.Checkout("main")
	h.repo.Branch("scale")
	h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	h.repo.Commit("scale create-order to 6")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "scale", User: author})
	rs.procs[0].deliver("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))
	h.eventuallyComment(pr, "(`quiesce_attestation`)")
	h.tick()
	c := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate attest quiesce create-order")
	rs.procs[1].deliver("issue_comment", githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{InstallationID: 1, Owner: owner, Repo: repoName,
		RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number, Author: author, CommentID: c.ID, Body: c.Body, User: approver}))
	h.eventuallyComment(pr, "✅ **Allowed")
	return pr
}

// merge merges the pull request and delivers the event to replica i.
func (rs *replicaSet) merge(pr githubtest.PullRequest, i int) string {
	t, h := rs.t, rs.h
	h.repo.Checkout("main")
	sha := h.repo.Merge("scale", "Merge pull request #1")
	h.gh.MergePR(owner, repoName, pr.Number, approver, sha)
	merged := h.gh.PRPayload(owner, repoName, pr.Number)
	merged.Sender = approver
	rs.procs[i].deliver("pull_request", githubtest.PullRequestClosedMergedSynthetic(t, merged, approver, sha, h.clock.Now()))
	return sha
}

// requireAppliedOnce checks the end of a merge's apply: applied, one scale
// of the stream in the coordinator's audit log, one audit record (from
// attempt minAttempt or later), the check run completed successfully.
func (rs *replicaSet) requireAppliedOnce(pr githubtest.PullRequest, sha string, minAttempt int) records.Audit {
	t, h := rs.t, rs.h
	body := h.eventuallyComment(pr, "✅ applied")
	require.Contains(t, body, "merged and applied (1 project)")
	job := rs.onlyApply("applied", time.Minute, func(j *applyqueue.Job) bool { return j.State == applyqueue.Applied })
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
			require.Equal(t, "completed", c.Status, "%+v", c)
		}
	}
	kvs, err := rs.st.List(context.Background(), records.BucketAudit, "")
	require.NoError(t, err)
	require.Len(t, kvs, 1, "one audit record: only the attempt that finished wrote one")
	var rec records.Audit
	require.NoError(t, json.Unmarshal(kvs[0].Value, &rec))
	require.Equal(t, string(applyqueue.Applied), rec.Outcome)
	require.GreaterOrEqual(t, rec.Attempt, minAttempt)
	require.Equal(t, job.Attempt, rec.Attempt, "the audit record is the finishing attempt's")
	return rec
}

// Webhooks sent to either of two replicas at random, each also sent again to
// the other, run once each; a PR planned on one and merged on the other is
// applied once.
func TestReplicasRunEveryDeliveryOnceAndApplyOnce(t *testing.T) {
	tftest.Binary(t)
	h := newProcessHarnessBase(t)
	rs := startReplicas(t, h, 2)
	pr := rs.planAndApprove()

	// Comments that are no commands, each delivered to both replicas.
	const deliveries = 20
	for i := range deliveries {
		c := h.gh.AddComment(owner, repoName, pr.Number, author, fmt.Sprintf("looks good %d", i))
		body := githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{InstallationID: 1, Owner: owner, Repo: repoName,
			RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number, Author: author, CommentID: c.ID, Body: c.Body, User: author})
		first := rand.IntN(2)
		id := fmt.Sprintf("comment-%d", i)
		for _, p := range []*serveProcess{rs.procs[first], rs.procs[1-first]} {
			resp, err := githubtest.Deliver(p.url+"/webhook", "issue_comment", body, testSecret, githubtest.WithDeliveryID(id))
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, 202, resp.StatusCode)
		}
	}
	require.Eventually(t, func() bool { return countDone(rs, "comment-") == deliveries }, time.Minute, 50*time.Millisecond)
	for i := range deliveries {
		runs := 0
		for _, p := range rs.procs {
			runs += strings.Count(p.logs.String(), fmt.Sprintf(`"delivery_id":"comment-%d","duration_ms"`, i))
		}
		require.Equal(t, 1, runs, "delivery comment-%d ran %d times", i, runs)
	}

	sha := rs.merge(pr, 1) // planned through replica 0, merged through replica 1
	rec := rs.requireAppliedOnce(pr, sha, 1)
	require.Equal(t, 1, rec.Attempt, "no replica took over a live apply")
}

// countDone is how many jobs whose delivery id starts with prefix are done,
// among the first 500 ids (a refused duplicate leaves a gap in them).
func countDone(rs *replicaSet, prefix string) int {
	n := 0
	for id := 1; id <= 500; id++ {
		j, err := rs.st.GetJob(context.Background(), fmt.Sprintf("%020d", id))
		if err == nil && strings.HasPrefix(j.DeliveryID, prefix) && j.State == store.JobDone {
			require.Equal(rs.t, 1, j.Attempts, "delivery %s was claimed once", j.DeliveryID)
			n++
		}
	}
	return n
}

// The replica running an apply is killed with SIGKILL in the middle of
// terraform apply (its coordinator calls in flight) and restarted at once,
// while its old lease is still live. Neither it nor the other replica takes
// the job before that lease expires; then one of them resumes it by
// re-planning, with a higher fencing token: one scale, one audit record.
func TestReplicaKilledMidApplyIsTakenOverOnceAndFenced(t *testing.T) {
	tftest.Binary(t)
	h := newProcessHarnessBase(t)
	rs := startReplicas(t, h, 2)
	pr := rs.planAndApprove()

	h.sim.SetDelay(1500 * time.Millisecond) // terraform apply's steps take seconds each
	calls := h.simCalls.Load()
	sha := rs.merge(pr, 0)
	running := rs.onlyApply("reached terraform apply", 2*time.Minute, func(j *applyqueue.Job) bool {
		return j.State == applyqueue.Applying && j.LeaseOwner != ""
	})
	// Observed: terraform apply is calling the coordinator.
	applyCalls := h.simCalls.Load()
	require.Eventually(t, func() bool { return h.simCalls.Load() > applyCalls }, time.Minute, 10*time.Millisecond)
	require.Greater(t, applyCalls, calls)
	victim := rs.holder(running)
	require.NotNil(t, victim, "the lease names a live replica: %s", running.LeaseOwner)
	victim.kill9()
	killedAt := time.Now()
	h.sim.SetDelay(0)
	victim.start() // restarted while the old lease is live
	require.True(t, time.Now().Before(running.LeaseUntil), "the restart came within the old lease (it ends %s)", running.LeaseUntil)

	// Nobody holds it before the old lease ran out.
	var took *applyqueue.Job
	require.Eventually(t, func() bool {
		j, err := rs.queue.Get(context.Background(), running.Seq)
		if err != nil || j.Fence == running.Fence {
			return false
		}
		require.False(t, time.Now().Before(running.LeaseUntil.Add(-100*time.Millisecond)),
			"taken over %s before the old lease expired", running.LeaseUntil.Sub(time.Now()))
		took = j
		return true
	}, time.Minute, 10*time.Millisecond)
	require.Greater(t, took.Fence, running.Fence)
	require.Equal(t, running.Attempt+1, took.Attempt)
	require.NotEqual(t, running.LeaseOwner, took.LeaseOwner, "the restarted process has a new owner name")
	t.Logf("taken over %s after the kill (the old lease ended %s after it) by %s",
		time.Since(killedAt).Round(time.Millisecond), running.LeaseUntil.Sub(killedAt).Round(time.Millisecond), took.LeaseOwner)

	rs.requireAppliedOnce(pr, sha, 2)
}

// The replica running an apply is stopped (SIGSTOP) while it waits for
// convergence, for longer than its lease; the other replica takes the job
// over and finishes it. Continued (SIGCONT), the first replica's late
// writes are refused: its renewal and its progress fail on the fencing
// token, and it records and reports nothing.
func TestReplicaPausedPastItsLeaseIsFenced(t *testing.T) {
	tftest.Binary(t)
	h := newProcessHarnessBase(t)
	rs := startReplicas(t, h, 2)
	pr := rs.planAndApprove()

	stall := func(on bool) { // the scale does not converge while stalled
		for _, g := range []string{"billing", "audit"} {
			require.True(t, h.sim.SetReconcileStalled("create-order", g, on))
		}
	}
	stall(true)
	sha := rs.merge(pr, 1)
	running := rs.onlyApply("started converging", 2*time.Minute, func(j *applyqueue.Job) bool {
		return j.State == applyqueue.Converging && j.LeaseOwner != ""
	})
	paused := rs.holder(running)
	require.NotNil(t, paused)
	require.NoError(t, paused.cmd.Process.Signal(syscall.SIGSTOP))
	took := rs.onlyApply("taken over", time.Minute, func(j *applyqueue.Job) bool { return j.Fence != running.Fence })
	require.NotEqual(t, running.LeaseOwner, took.LeaseOwner)
	// The new holder waits for convergence too; the paused one wakes up now.
	require.NoError(t, paused.cmd.Process.Signal(syscall.SIGCONT))
	require.Eventually(t, func() bool { return strings.Contains(paused.logs.String(), "apply job lease lost") },
		time.Minute, 20*time.Millisecond, "the woken replica learns it lost the job")
	stall(false)

	rec := rs.requireAppliedOnce(pr, sha, 2)
	require.Equal(t, took.Attempt, rec.Attempt)
	logs := paused.logs.String()
	require.Contains(t, logs, "apply job lost its lease to another process; outcome not recorded")
	require.NotContains(t, logs, "apply job finished", "the paused replica recorded no outcome")
	require.NotContains(t, logs, `"msg":"apply outcome`, "nor reported one")
}
