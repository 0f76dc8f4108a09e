//go:build linux

package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockABI is the kernel's Landlock ABI version (an error when Landlock
// is missing or disabled at boot).
var landlockABI = llsys.LandlockGetABIVersion

// SandboxSupported says whether this kernel can confine terraform, and if
// not, why.
func SandboxSupported() error {
	v, err := landlockABI()
	return checkLandlockABI(v, err)
}

// LandlockABI is the kernel's Landlock ABI version, 0 when it has none.
func LandlockABI() int {
	v, err := landlockABI()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

func checkLandlockABI(v int, err error) error {
	if err != nil || v < 1 {
		return fmt.Errorf("landlock is not available on this kernel (Linux 6.2 or later with landlock among the enabled LSMs is needed)")
	}
	if v < MinLandlockABI {
		return fmt.Errorf("this kernel offers Landlock ABI %d; the sandbox needs ABI %d (Linux 6.2), the first to confine truncation", v, MinLandlockABI)
	}
	return nil
}

// MinConnectABI is the Landlock ABI that restricts TCP connect and bind.
const MinConnectABI = 4

// SandboxConnectSupported says whether this kernel can limit the ports
// sandboxed terraform connects to, and if not, why.
func SandboxConnectSupported() error { return checkConnectABI(landlockABI()) }

func checkConnectABI(v int, err error) error {
	if err != nil || v < MinConnectABI {
		return fmt.Errorf("terraform.sandbox_connect_ports needs Landlock ABI %d (Linux 6.7); this kernel offers %d", MinConnectABI, max(v, 0))
	}
	return nil
}

// ExecSandboxed confines the calling process to p, as the terraform command
// args[0] is allowed, and replaces it with p.Exec given args. It returns only
// on failure; nothing runs unconfined after a failed step.
//
// Landlock and capabilities bind the calling thread; execve keeps that
// thread's credentials for the new program. So the thread is locked, made
// to drop every capability (a uid-0 terraform would otherwise keep
// CAP_SYS_MODULE, CAP_SYS_RAWIO, ... and regain them at exec), restricted
// and exec'd, following go-landlock's NewRulesetFD example.
func ExecSandboxed(p SandboxPolicy, args []string) error {
	runtime.LockOSThread() // never unlocked: this thread becomes terraform
	if p.Cgroup != "" {
		// First, while this process may still write the cgroup's files.
		if err := p.validate(); err != nil {
			return err
		}
		if err := joinCgroup(p.Cgroup); err != nil {
			return err
		}
	}
	if err := confineThread(p, args); err != nil {
		return err
	}
	err := syscall.Exec(p.Exec, append([]string{p.Exec}, args...), launcherEnv())
	return fmt.Errorf("exec %s: %w", p.Exec, err)
}

// errNoThreadFS is runConfined's error when the thread could not take its
// own filesystem attributes; nothing was confined nor started then.
var errNoThreadFS = errors.New("sandbox: unshare the thread's filesystem attributes")

// unshareFS gives the calling thread its own umask, cwd and root; tests
// stand in a host that refuses it.
var unshareFS = func() error { return unix.Unshare(unix.CLONE_FS) }

// runConfined runs cmd (whose program is p.Exec) confined to p, as the
// terraform command args[0] is allowed, without a launcher process: the
// same confinement as ExecSandboxed, on one thread of this process.
//
// A goroutine locks an OS thread and never unlocks it, so no other goroutine
// ever runs there and the thread ends with the goroutine (Go never reuses a
// thread whose goroutine exited locked, and new threads are cloned from its
// template thread, not from a locked one). The thread takes its own
// filesystem attributes (unshare CLONE_FS) so that its umask is its own,
// then drops every capability, sets no_new_privs and enters the Landlock
// domain, all of which bind only the calling thread; the rest of the server
// is never restricted. cmd is started from that thread, so the child
// inherits its credentials and domain at fork, before terraform runs. The
// thread waits for cmd too: the child's Pdeathsig fires when the thread that
// started it ends, so it must outlive the command. The process's main thread
// is never the one confined. started, if not nil, is called once cmd is
// running.
func runConfined(p SandboxPolicy, args []string, cmd *exec.Cmd, started func()) error {
	if cmd.Stdin == nil {
		// Opened here: the confined thread may not open /dev/null for reading.
		null, err := os.Open(os.DevNull)
		if err != nil {
			return err
		}
		defer null.Close()
		cmd.Stdin = null
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if unix.Gettid() == unix.Getpid() {
			// The main thread cannot end (Go parks it for good), and its
			// credentials are the ones /proc shows for the process. It stays
			// locked to this goroutine, so the confined one gets another.
			done <- runConfined(p, args, cmd, started)
			runtime.UnlockOSThread()
			return
		}
		if err := unshareFS(); err != nil {
			done <- fmt.Errorf("%w: %w", errNoThreadFS, err)
			return
		}
		if err := unsharePID(p); err != nil { // while the thread may (CAP_SYS_ADMIN)
			done <- err
			return
		}
		if err := confineThread(p, args); err != nil {
			done <- fmt.Errorf("sandbox: %w", err)
			return
		}
		if err := cmd.Start(); err != nil {
			done <- err
			return
		}
		if started != nil {
			started()
		}
		done <- cmd.Wait()
	}()
	return <-done
}

// confineThread confines the calling thread, which the caller has locked,
// to p for the terraform command args[0]: private umask, no capability,
// no_new_privs, the Landlock domain. A failure leaves the thread
// half-confined: the caller must start nothing from it.
func confineThread(p SandboxPolicy, args []string) error {
	if err := p.validate(); err != nil {
		return err
	}
	if err := SandboxSupported(); err != nil {
		return err
	}
	rw, ro := p.grants(args)
	rules := landlockRules(rw, ro)
	// Paths and IPC scopes (signals, abstract sockets: ABI 6+); the network
	// stays open for registries, backends and coordinators unless the ports
	// are limited, which needs ABI 4 and is never dropped silently.
	cfg := landlock.Config{HandledAccessFS: landlock.V5.HandledAccessFS, Scoped: landlock.V6.Scoped}.BestEffort()
	if p.LimitConnect {
		if err := checkConnectABI(landlockABI()); err != nil {
			return err
		}
		cfg.HandledAccessNet = landlock.V4.HandledAccessNet
		for _, port := range p.ConnectPorts {
			rules = append(rules, landlock.ConnectTCP(uint16(port)))
		}
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("make landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock would enforce nothing on this kernel")
	}
	defer unix.Close(fd)
	// Whatever terraform writes (saved plan, state, lock file) is private.
	syscall.Umask(0o077)
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// landlockRules grants rw and ro, each path as a directory tree or as a
// single file, whichever it is (Landlock refuses directory rights on a
// file). A missing path grants nothing and is skipped: a saved plan file,
// say, exists from plan on, not during init.
func landlockRules(rw, ro []string) []landlock.Rule {
	var rules []landlock.Rule
	for _, path := range rw {
		st, err := os.Stat(path)
		if err != nil {
			continue
		}
		if st.IsDir() {
			// Refer: terraform and go-getter rename between the granted trees.
			rules = append(rules, landlock.RWDirs(path).WithRefer())
		} else {
			rules = append(rules, landlock.RWFiles(path))
		}
	}
	for _, path := range ro {
		st, err := os.Stat(path)
		if err != nil {
			continue
		}
		if st.IsDir() {
			rules = append(rules, landlock.RODirs(path))
		} else {
			rules = append(rules, landlock.ROFiles(path))
		}
	}
	return rules
}

// Securebits (linux/securebits.h): uid 0 gains no capability at exec, and
// nothing may raise ambient capabilities; both locked.
const (
	secbitNoRoot                 = 1 << 0
	secbitNoRootLocked           = 1 << 1
	secbitNoCapAmbientRaise      = 1 << 6
	secbitNoCapAmbientRaiseLockd = 1 << 7
)

// dropCapabilities empties every capability set of the calling thread,
// including the bounding set, so that no capability survives the exec of
// terraform, even running as root. A process holding capabilities it cannot
// drop is an error.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	privileged := os.Geteuid() == 0 || data[0].Permitted|data[1].Permitted != 0
	if privileged {
		bits := secbitNoRoot | secbitNoRootLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLockd
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
			return fmt.Errorf("set securebits: %w", err)
		}
		for c := 0; ; c++ {
			err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability this kernel knows
			}
			if err != nil {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
