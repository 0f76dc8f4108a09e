//go:build linux

package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// daemonScript starts a daemon the way a pull request's script would:
// setsid nohup, its output detached, in the background, and a second one by
// double fork. Each writes its pid into dir, as /proc (the host's) names it,
// not $$, which is its pid in a PID namespace of terraform's; the script
// returns once both did, leaving them running.
func daemonScript(dir string) string {
	daemon := func(name string) string {
		return `sh -c 'read pid rest < /proc/self/stat; echo $pid > ` + dir + `/` + name + `; exec sleep 3600' >/dev/null 2>&1 </dev/null &`
	}
	return `setsid nohup ` + daemon("setsid.pid") + `
( ` + daemon("forked.pid") + ` ) &
while [ ! -s ` + dir + `/setsid.pid ] || [ ! -s ` + dir + `/forked.pid ]; do sleep 0.05; done`
}

// daemonPids reads the pids daemonScript left in dir; each daemon is killed
// at cleanup should the test fail with it running.
func daemonPids(t *testing.T, dir string) []int {
	t.Helper()
	var pids []int
	for _, name := range []string{"setsid.pid", "forked.pid"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, "the daemon wrote its pid")
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		t.Cleanup(func() {
			if processAlive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		pids = append(pids, pid)
	}
	return pids
}

// processAlive says whether pid names a process that can still run: one
// that exists and is not a zombie (dead, waiting to be reaped by its new
// parent, pid 1 here).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	rest := b[bytes.LastIndexByte(b, ')')+1:]
	fields := strings.Fields(string(rest))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// requireContained fails when this host gives the runner no cgroup to end
// its jobs' processes with: the test is about that mechanism.
func requireContained(t *testing.T, r *Runner) {
	t.Helper()
	c := r.Containment()
	require.Equal(t, ContainCgroup, c.Mechanism, "this host must offer a cgroup v2 to test the containment: %s", c)
}

// TestSandboxedDaemonDiesWithTheApply is issue 32's attack: a module's
// provisioner starts a setsid nohup daemon (and a double-forked one) at
// apply time; each must be gone, checked by pid, when the apply returns,
// and so must the command's cgroup. Both mechanisms are real on this host:
// the cgroup it detects, and the PID namespace of a host without one.
func TestSandboxedDaemonDiesWithTheApply(t *testing.T) {
	t.Run("cgroup", func(t *testing.T) { testDaemonDiesWithTheApply(t, nil) })
	t.Run("pid namespace", func(t *testing.T) {
		testDaemonDiesWithTheApply(t, &Containment{Mechanism: ContainPIDNamespace, Reason: "this test's host without cgroups"})
	})
}

// testDaemonDiesWithTheApply runs the attack on a runner containing its
// jobs as detected, or as contain says.
func testDaemonDiesWithTheApply(t *testing.T, contain *Containment) {
	dir := t.TempDir() // the module: the daemons write their pids there
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`resource "terraform_data" "daemon" {
  provisioner "local-exec" {
    command = <<-EOT
`+daemonScript(dir)+`
EOT
  }
}`), 0o644))
	r := sandboxRunner(t, WithPluginCacheDir(t.TempDir()))
	requireContained(t, r)
	if contain != nil {
		r.containment = *contain
	}
	j := newJob(t, r, JobConfig{Dir: dir})
	ctx := context.Background()
	require.NoError(t, j.Init(ctx), j.Output())
	_, err := j.Plan(ctx)
	require.NoError(t, err, j.Output())
	require.NoError(t, j.Apply(ctx), j.Output())
	for _, pid := range daemonPids(t, dir) {
		require.False(t, processAlive(pid), "process %d started by the apply still runs after it", pid)
	}
	left, err := filepath.Glob(filepath.Join(r.Containment().Parent, fmt.Sprintf("shardgate-%d-*", os.Getpid())))
	require.NoError(t, err)
	require.Empty(t, left, "each command's cgroup is removed when it ends")
}

// TestConfinedThreadDaemonDies: a command started on a confined thread (init,
// plan, show), which has dropped every capability before it forks, starts
// in the job's cgroup too, and what it leaves is killed with it.
func TestConfinedThreadDaemonDies(t *testing.T) {
	t.Run("pid namespace", func(t *testing.T) {
		require.NoError(t, probePIDNamespace(), "this host must allow a PID namespace to test it")
		work := t.TempDir()
		p := shPolicy(work)
		p.PIDNamespace = true
		args := []string{"-c", daemonScript(work)}
		cmd := exec.Command(p.Exec, args...)
		cmd.Dir = work
		cmd.SysProcAttr = sysProcAttr()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, runConfined(p, args, cmd, nil), out.String())
		for _, pid := range daemonPids(t, work) {
			require.False(t, processAlive(pid), "process %d outlived the init of its namespace", pid)
		}
	})
	c := ProcessContainment()
	require.Equal(t, ContainCgroup, c.Mechanism, "this host must offer a cgroup v2 to test the containment: %s", c)
	cg, err := newJobCgroup(c.Parent)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cg.remove()) })
	work := t.TempDir()
	p := shPolicy(work)
	p.Cgroup = cg.dir
	args := []string{"-c", daemonScript(work)}
	cmd := exec.Command(p.Exec, args...)
	cmd.Dir = work
	cmd.SysProcAttr = sysProcAttr()
	cg.procAttr(cmd.SysProcAttr)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, runConfined(p, args, cmd, nil), out.String())
	pids := daemonPids(t, work)
	for _, pid := range pids {
		require.True(t, processAlive(pid), "the daemon runs until the command's end is handled")
	}
	require.NoError(t, cg.kill())
	for _, pid := range pids {
		require.False(t, processAlive(pid), "process %d outlived its command", pid)
	}
}

// TestSweepCgroupsOfADeadServer: the cgroup a shardgate killed -9 left, with
// a daemon in it, is killed and removed at the next start; a live process's
// is left alone.
func TestSweepCgroupsOfADeadServer(t *testing.T) {
	c := ProcessContainment()
	require.Equal(t, ContainCgroup, c.Mechanism, "this host must offer a cgroup v2 to test the containment: %s", c)
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	dead := gone.Process.Pid // a shardgate that is gone
	stale := filepath.Join(c.Parent, fmt.Sprintf("shardgate-%d-job-1", dead))
	live := filepath.Join(c.Parent, fmt.Sprintf("shardgate-%d-job-1", os.Getppid()))
	for _, dir := range []string{stale, live} {
		require.NoError(t, os.Mkdir(dir, 0o700))
		t.Cleanup(func() { _ = (&jobCgroup{dir: dir, fd: -1}).remove() })
	}
	fd, err := syscall.Open(stale, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	require.NoError(t, err)
	defer syscall.Close(fd)
	daemon := exec.Command("sleep", "3600")
	daemon.SysProcAttr = &syscall.SysProcAttr{Setsid: true, UseCgroupFD: true, CgroupFD: fd}
	require.NoError(t, daemon.Start())
	t.Cleanup(func() { _ = daemon.Process.Kill() })
	waited := make(chan error, 1)
	go func() { waited <- daemon.Wait() }()

	sweepCgroups(c.Parent)
	require.Error(t, <-waited, "the daemon was killed")
	require.NoDirExists(t, stale)
	require.DirExists(t, live)
}
