package bot

import (
	"os"
	"os/exec"
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
)

// holdStateLock has an operator's terraform apply hold the harness's state
// lock (a resource of its own sleeps in its provisioner) until the test
// ends; it returns the lock's info file.
func holdStateLock(t *testing.T, h *harness) string {
	t.Helper()
	tf := tftest.Binary(t)
	dir := t.TempDir()
	out, err := exec.Command("sh", "-c", "git -C "+h.repo.Dir()+" archive main | tar -x -C "+dir).CombinedOutput()
	require.NoError(t, err, string(out))
	root := filepath.Join(dir, "streams")
	require.NoError(t, os.WriteFile(filepath.Join(root, "slow.tf"), []byte(`resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "sleep 600"
  }
}
`), 0o600))
	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=", "TF_VAR_coordinator_username=admin", "TF_VAR_coordinator_password=password")
	initCmd := exec.Command(tf, "init", "-input=false")
	initCmd.Dir, initCmd.Env = root, env
	out, err = initCmd.CombinedOutput()
	require.NoError(t, err, string(out))
	operator := exec.Command(tf, "apply", "-input=false", "-auto-approve")
	operator.Dir, operator.Env = root, env
	operator.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var opOut lockedBuffer
	operator.Stdout, operator.Stderr = &opOut, &opOut
	require.NoError(t, operator.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-operator.Process.Pid, syscall.SIGKILL)
		_ = operator.Wait()
	})
	lockInfo := filepath.Join(filepath.Dir(h.state), "."+filepath.Base(h.state)+".lock.info")
	require.Eventually(t, func() bool { _, err := os.Stat(lockInfo); return err == nil }, time.Minute, 20*time.Millisecond,
		"the operator's apply never took the state lock: %s", &opOut)
	return lockInfo
}

// descendants lists the processes below pid, with their command lines.
func descendants(t *testing.T, pid int) map[int]string {
	t.Helper()
	parent := map[int]int{}
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 {
			parent[n], _ = strconv.Atoi(fields[1])
		}
	}
	below := func(n int) bool {
		for hops := 0; n > 1 && hops < 64; hops++ {
			if n = parent[n]; n == pid {
				return true
			}
		}
		return false
	}
	out := map[int]string{}
	for n := range parent {
		if below(n) {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(n) + "/cmdline")
			out[n] = strings.ReplaceAll(string(cmdline), "\x00", " ")
		}
	}
	return out
}

// Through `shardgate serve`: a plan waits for a state lock an operator's
// apply holds; the pull request's author comments `/shardgate cancel`.
// Within 30 s the plan's check run concludes cancelled, the comment says
// who cancelled, and no terraform of the service is left running; the
// operator's lock was never touched.
func TestCancelStopsAPlanWaitingOnAStateLock(t *testing.T) {
	tftest.Binary(t)
	h := newProcessHarnessBase(t)
	p := startServe(t, h)
	lockInfo := holdStateLock(t, h)

	h.repo.Checkout("main")
	h.repo.Branch("scale")
	h.writeRoot(with(baseGroups, map[string]int{"payments/ledger": 3}))
	h.repo.Commit("scale payments")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "scale", User: author})
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	p.deliver("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))
	h.eventuallyComment(pr, "is waiting for the Terraform state lock held by")
	// Between its attempts terraform is not running: its next -lock-timeout
	// wait starts after the comment says it waits.
	require.Eventually(t, func() bool { return len(terraformsOf(t, p)) > 0 }, 30*time.Second, 20*time.Millisecond,
		"the plan's terraform runs, waiting for the lock")

	// A second plan, asked meanwhile, waits in the pull request's line.
	replan := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate plan")
	p.deliver("issue_comment", githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{InstallationID: 1, Owner: owner, Repo: repoName,
		RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number, Author: author, CommentID: replan.ID, Body: replan.Body, User: approver}))

	c := h.gh.AddComment(owner, repoName, pr.Number, author, "/shardgate cancel")
	asked := time.Now()
	p.deliver("issue_comment", githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{InstallationID: 1, Owner: owner, Repo: repoName,
		RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number, Author: author, CommentID: c.ID, Body: c.Body, User: author}))
	require.Eventually(t, func() bool {
		for _, run := range h.gh.CheckRuns(owner, repoName) {
			if run.Name == prreport.CheckPlanPrefix+"streams" && run.HeadSHA == head && run.Status == "completed" {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the plan's check run was not completed within 30 s of the cancel: %s", p.logs)
	t.Logf("the plan's check run completed %s after the cancel was delivered", time.Since(asked).Round(time.Millisecond))
	require.Empty(t, terraformsOf(t, p), "no terraform of the service is left running")

	plan := h.check(prreport.CheckPlanPrefix+"streams", head)
	require.Equal(t, "cancelled", plan.Conclusion)
	require.Equal(t, "Cancelled by @"+author, plan.Title)
	require.Eventually(t, func() bool { return h.check(prreport.CheckGateName, head).Conclusion == "cancelled" }, 30*time.Second, 20*time.Millisecond,
		"the aggregate check concludes cancelled after the plan's: %+v", h.check(prreport.CheckGateName, head))
	h.eventuallyComment(pr, "cancelled by @"+author+": the plan of `"+head[:7]+"` was stopped")
	require.Eventually(t, func() bool {
		for _, r := range h.gh.Comments(owner, repoName, pr.Number) {
			if strings.Contains(r.Body, "\n@"+author+", cancelled: ") && strings.Contains(r.Body, "1 running plan stopped") {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the reply says what was cancelled")
	// The plan queued before the cancel runs its job, and plans nothing.
	require.Eventually(t, func() bool { return strings.Contains(p.logs.String(), "plan job cancelled before it ran") }, 30*time.Second, 20*time.Millisecond,
		"the queued plan's job ran: %s", p.logs)
	runs := 0
	for _, run := range h.gh.CheckRuns(owner, repoName) {
		if run.Name == prreport.CheckPlanPrefix+"streams" && run.HeadSHA == head {
			runs++
		}
	}
	require.Equal(t, 1, runs, "the queued plan started no check run")
	require.Contains(t, h.theComment(pr), "cancelled by @"+author)
	require.Empty(t, terraformsOf(t, p))
	require.FileExists(t, lockInfo, "the operator's lock is still its own: shardgate never breaks a lock")
	require.NotContains(t, p.logs.String(), `"level":"error"`, "the cancel is no job failure")
}

// terraformsOf lists the service's processes that run terraform (or a
// provider, or the sandbox launcher of one).
func terraformsOf(t *testing.T, p *serveProcess) []string {
	t.Helper()
	var out []string
	for pid, cmdline := range descendants(t, p.cmd.Process.Pid) {
		if strings.Contains(cmdline, "terraform") {
			out = append(out, strconv.Itoa(pid)+": "+cmdline)
		}
	}
	return out
}
