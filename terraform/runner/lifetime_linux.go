//go:build linux

package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ProcessContainment is how sandboxed jobs' processes are ended on this
// host (detected once): a cgroup v2 under this process's own cgroup, where
// the kernel has cgroup.kill (Linux 5.14) and this process may make one.
var ProcessContainment = sync.OnceValue(func() Containment {
	c := detectContainment("/proc/self/mountinfo", "/proc/self/cgroup")
	if c.Enforced() {
		return c
	}
	if err := probePIDNamespace(); err != nil {
		c.Reason += fmt.Sprintf("; nor can it make a PID namespace: %v", err)
		return c
	}
	return Containment{Mechanism: ContainPIDNamespace, Reason: c.Reason}
})

// probePIDNamespace checks that a thread may put its children into a PID
// namespace of their own (CAP_SYS_ADMIN), on a thread that then ends.
func probePIDNamespace() error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if unix.Gettid() == unix.Getpid() {
			done <- probePIDNamespace() // never the main thread, which cannot end
			runtime.UnlockOSThread()
			return
		}
		done <- unix.Unshare(unix.CLONE_NEWPID)
	}()
	return <-done
}

// unsharePID makes the calling thread's next child the init of a new PID
// namespace when p asks for one; the caller has locked the thread, which
// ends after that child.
func unsharePID(p SandboxPolicy) error {
	if !p.PIDNamespace {
		return nil
	}
	// The first process start checks, once, that pidfds work by forking a
	// child that exits at once (os.checkPidfd). Made after the unshare, that
	// child would be the namespace's init, and the namespace dead before
	// terraform could start in it (ENOMEM): have the check made first.
	_, _ = os.FindProcess(os.Getpid())
	if err := unix.Unshare(unix.CLONE_NEWPID); err != nil {
		return fmt.Errorf("sandbox: make a PID namespace: %w", err)
	}
	return nil
}

// runAsInit is the launcher for a policy with PIDNamespace: it starts
// terraform confined, as the init of a PID namespace of its own, passes the
// signals it gets on to it (tfexec's interrupt), and returns its exit code.
// When terraform exits, the kernel kills what is left in its namespace; if
// the launcher is killed, terraform is too (Pdeathsig).
func runAsInit(p SandboxPolicy, args []string) int {
	cmd := exec.Command(p.Exec, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = launcherEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	var proc atomic.Pointer[os.Process]
	go func() {
		for sig := range sigs {
			if pr := proc.Load(); pr != nil {
				_ = pr.Signal(sig)
			}
		}
	}()
	err := runConfined(p, args, cmd, func() { proc.Store(cmd.Process) })
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exitErr.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "shardgate sandbox: %v\n", err)
	return 126
}

// detectContainment finds this process's cgroup v2 directory from
// mountinfo and cgroup (the /proc/self files) and checks that a job's
// cgroup can be made there and killed.
func detectContainment(mountinfo, cgroup string) Containment {
	none := func(format string, a ...any) Containment {
		return Containment{Mechanism: ContainNone, Reason: fmt.Sprintf(format, a...)}
	}
	mount, root, err := cgroup2Mount(mountinfo)
	if err != nil {
		return none("%v", err)
	}
	own, err := ownCgroup2(cgroup)
	if err != nil {
		return none("%v", err)
	}
	rel, err := filepath.Rel(root, own)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return none("this process's cgroup %s is outside the cgroup v2 mount at %s", own, mount)
	}
	parent := filepath.Join(mount, rel)
	probe, err := newJobCgroup(parent)
	if err != nil {
		return none("cannot make a cgroup in %s: %v", parent, err)
	}
	// The root cgroup has none; every other has it from Linux 5.14.
	_, noKill := os.Stat(filepath.Join(probe.dir, "cgroup.kill"))
	if err := probe.remove(); noKill != nil || err != nil {
		_ = unix.Rmdir(probe.dir)
		if noKill != nil {
			return none("the kernel has no cgroup.kill (Linux 5.14)")
		}
		return none("cannot remove a cgroup from %s: %v", parent, err)
	}
	sweepCgroups(parent)
	return Containment{Mechanism: ContainCgroup, Parent: parent}
}

// sweepCgroups kills and removes the cgroups a shardgate process that is gone
// left in parent (killed -9: its commands' leftovers would live on). A
// cgroup is named after its process's pid; one whose process still runs is
// another live shardgate's.
func sweepCgroups(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "shardgate-*-job-*"))
	for _, dir := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(dir), "shardgate-"), "-")
		if n, err := strconv.Atoi(pid); err != nil || n == os.Getpid() || unix.Kill(n, 0) == nil {
			continue
		}
		_ = (&jobCgroup{dir: dir, fd: -1}).remove()
	}
}

// cgroup2Mount is the mount point of the cgroup v2 hierarchy and the
// hierarchy path mounted there, from a mountinfo file.
func cgroup2Mount(mountinfo string) (mount, root string, err error) {
	b, err := os.ReadFile(mountinfo)
	if err != nil {
		return "", "", fmt.Errorf("read the mounts: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(g) >= 1 && g[0] == "cgroup2" {
			return unescapeMountinfo(f[4]), unescapeMountinfo(f[3]), nil
		}
	}
	return "", "", errors.New("no cgroup v2 hierarchy is mounted")
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroup2 is this process's path in the cgroup v2 hierarchy (the "0::"
// line of /proc/self/cgroup).
func ownCgroup2(cgroup string) (string, error) {
	b, err := os.ReadFile(cgroup)
	if err != nil {
		return "", fmt.Errorf("read this process's cgroups: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok && filepath.IsAbs(path) {
			return path, nil
		}
	}
	return "", errors.New("this process is in no cgroup v2")
}

// jobCgroup is one job's cgroup: every process of its terraform commands
// starts in it (fd, clone3's CLONE_INTO_CGROUP; the launcher joins it by
// path) and is killed with it.
type jobCgroup struct {
	dir string
	fd  int
}

var jobCgroups atomic.Uint64

// newJobCgroup makes an empty cgroup in parent, named after this process.
func newJobCgroup(parent string) (*jobCgroup, error) {
	dir := filepath.Join(parent, fmt.Sprintf("shardgate-%d-job-%d", os.Getpid(), jobCgroups.Add(1)))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return &jobCgroup{dir: dir, fd: fd}, nil
}

// procAttr starts a command's process inside the cgroup.
func (c *jobCgroup) procAttr(a *syscall.SysProcAttr) {
	a.UseCgroupFD, a.CgroupFD = true, c.fd
}

// killTimeout bounds the wait for killed processes to be gone.
const killTimeout = 10 * time.Second

// kill ends every process in the cgroup and waits until none is left.
func (c *jobCgroup) kill() error {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return fmt.Errorf("kill the job's processes: %w", err)
	}
	return c.waitEmpty(killTimeout)
}

// waitEmpty waits, at most d, for cgroup.events to say "populated 0": the
// kernel notifies a change of it as POLLPRI, and each poll is bounded too.
func (c *jobCgroup) waitEmpty(d time.Duration) error {
	f, err := os.Open(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return fmt.Errorf("watch the job's processes: %w", err)
	}
	defer f.Close()
	const step = 50 * time.Millisecond
	buf := make([]byte, 256)
	for range d / step {
		n, err := f.ReadAt(buf, 0)
		if err != nil && n == 0 {
			return fmt.Errorf("watch the job's processes: %w", err)
		}
		if bytes.Contains(buf[:n], []byte("populated 0")) {
			return nil
		}
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLPRI}}
		if _, err := unix.Poll(fds, int(step.Milliseconds())); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("watch the job's processes: %w", err)
		}
	}
	return fmt.Errorf("processes of the job were still alive %s after they were killed", d)
}

// remove kills what is left and removes the cgroup.
func (c *jobCgroup) remove() error {
	err := c.kill()
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
	}
	if rmErr := unix.Rmdir(c.dir); rmErr != nil && !errors.Is(rmErr, unix.ENOENT) {
		err = errors.Join(err, fmt.Errorf("remove the job's cgroup: %w", rmErr))
	}
	return err
}

// joinCgroup moves the calling process into the cgroup at dir (the
// launcher, before it confines itself and becomes terraform).
func joinCgroup(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("0"), 0); err != nil {
		return fmt.Errorf("join the job's cgroup: %w", err)
	}
	return nil
}
