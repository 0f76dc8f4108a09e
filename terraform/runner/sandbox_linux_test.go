//go:build linux

package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// starter runs program p.Exec confined to p, from dir, and returns its
// combined output: through the launcher or on a confined thread.
type starter func(t *testing.T, p SandboxPolicy, dir string, args ...string) (string, error)

// bothWays runs a sandbox test through the launcher (apply) and on a
// confined thread of this process (init, plan, show): the two must confine
// alike.
func bothWays(t *testing.T, test func(t *testing.T, launch starter)) {
	t.Run("launcher", func(t *testing.T) { test(t, viaLauncher) })
	t.Run("thread", func(t *testing.T) { test(t, onConfinedThread) })
}

// onConfinedThread runs program confined to policy as a sandboxed job's
// direct commands do (runConfined), from dir.
func onConfinedThread(t *testing.T, p SandboxPolicy, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(p.Exec, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := runConfined(p, args, cmd, nil)
	return out.String(), err
}

// viaLauncher runs program confined to policy through the launcher (this test
// binary, see TestMain), from dir, and returns its combined output.
func viaLauncher(t *testing.T, p SandboxPolicy, dir string, args ...string) (string, error) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	js, err := json.Marshal(p)
	require.NoError(t, err)
	cmd := exec.Command(self, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), SandboxEnv+"="+string(js))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// shPolicy confines /bin/sh to the system paths and rw.
func shPolicy(rw ...string) SandboxPolicy {
	return SandboxPolicy{Exec: "/bin/sh", ReadWrite: append(rw, SystemReadWrite...), ReadOnly: SystemReadOnly}
}

func TestLauncherConfinesFiles(t *testing.T) { bothWays(t, testLauncherConfinesFiles) }

func testLauncherConfinesFiles(t *testing.T, launch starter) {
	work := t.TempDir()
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "webhook-secret")
	require.NoError(t, os.WriteFile(secret, []byte("hook-5ecret-value"), 0o600))

	tests := []struct {
		name    string
		script  string
		wantErr bool
		want    string
	}{
		{name: "reads and writes its own tree", script: "echo hi > w && cat w", want: "hi"},
		{name: "reads system files", script: "head -c 4 /etc/passwd", want: "root"},
		{name: "writes /dev/null", script: "echo gone > /dev/null && echo ok", want: "ok"},
		{name: "writes privately", script: "umask", want: "0077"},
		{name: "cannot read a file outside", script: "cat " + secret, wantErr: true, want: "Permission denied"},
		{name: "cannot list a directory outside", script: "ls " + secretDir, wantErr: true, want: "Permission denied"},
		{name: "cannot write outside", script: "echo x > " + filepath.Join(secretDir, "planted"), wantErr: true, want: "Permission denied"},
		{name: "cannot truncate outside", script: "truncate -s 0 " + secret, wantErr: true, want: "Permission denied"},
		{name: "cannot read the parent's environment", script: "cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ", wantErr: true, want: "Permission denied"},
		{name: "cannot read a device", script: "head -c1 " + readableDevice(t) + " >/dev/null", wantErr: true, want: "Permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := launch(t, shPolicy(work), work, "-c", tt.script)
			if tt.wantErr {
				require.Error(t, err, out)
			} else {
				require.NoError(t, err, out)
			}
			require.Contains(t, out, tt.want)
			require.NotContains(t, out, "hook-5ecret-value")
		})
	}
	content, err := os.ReadFile(secret)
	require.NoError(t, err)
	require.Equal(t, "hook-5ecret-value", string(content), "the secret was not truncated")
	require.NoFileExists(t, filepath.Join(secretDir, "planted"))
}

// readableDevice is a device file this test process can read unconfined: a
// disk, or the kernel log. A sandboxed root must read neither.
func readableDevice(t *testing.T) string {
	for _, dev := range []string{"/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/xvda", "/dev/loop0", "/dev/kmsg"} {
		if f, err := os.OpenFile(dev, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
			return dev
		}
	}
	t.Fatal("no readable device to prove the sandbox closes /dev")
	return ""
}

func TestLauncherPluginCacheWritableByInitOnly(t *testing.T) {
	bothWays(t, testLauncherPluginCacheWritableByInitOnly)
}

func testLauncherPluginCacheWritableByInitOnly(t *testing.T, launch starter) {
	work := t.TempDir()
	cache := t.TempDir()
	// `sh init` and `sh plan` run the scripts of those names from work: the
	// launcher sees the same first argument terraform would.
	for _, cmd := range []string{"init", "plan", "apply"} {
		script := "echo " + cmd + " > " + filepath.Join(cache, cmd) + " && cat " + filepath.Join(cache, "init") + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(work, cmd), []byte(script), 0o644))
	}
	p := shPolicy(work)
	p.PluginCache = cache

	out, err := launch(t, p, work, "init")
	require.NoError(t, err, out)
	require.Contains(t, out, "init")
	for _, cmd := range []string{"plan", "apply"} {
		out, err := launch(t, p, work, cmd)
		require.Error(t, err, out)
		require.Contains(t, out, "Permission denied")
		require.NoFileExists(t, filepath.Join(cache, cmd))
	}
	// Reading (and running) what init cached stays allowed.
	require.NoError(t, os.WriteFile(filepath.Join(work, "show"), []byte("cat "+filepath.Join(cache, "init")+"\n"), 0o644))
	out, err = launch(t, p, work, "show")
	require.NoError(t, err, out)
	require.Equal(t, "init\n", out)
}

func TestLauncherDropsPrivileges(t *testing.T) { bothWays(t, testLauncherDropsPrivileges) }

func testLauncherDropsPrivileges(t *testing.T, launch starter) {
	p := SandboxPolicy{Exec: "/bin/cat", ReadOnly: SystemReadOnly}
	out, err := launch(t, p, t.TempDir(), "/proc/self/status")
	require.NoError(t, err, out)
	status := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			status[k] = strings.TrimSpace(v)
		}
	}
	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		require.Equal(t, "0000000000000000", status[set], set)
	}
	require.Equal(t, "1", status["NoNewPrivs"])
}

func TestLauncherSignalScope(t *testing.T) { bothWays(t, testLauncherSignalScope) }

func testLauncherSignalScope(t *testing.T, launch starter) {
	v, err := landlockABI()
	require.NoError(t, err)
	out, err := launch(t, shPolicy(), t.TempDir(), "-c", "kill -0 "+strconv.Itoa(os.Getpid()))
	if v >= 6 {
		require.Error(t, err, "Landlock ABI %d scopes signals: terraform cannot signal the server", v)
		return
	}
	require.NoError(t, err, "below ABI 6 signals are not scoped: %s", out)
}

func TestLauncherFailsClosed(t *testing.T) {
	work := t.TempDir()
	marker := filepath.Join(work, "ran")
	tests := []struct {
		name   string
		policy SandboxPolicy
		want   string
	}{
		{name: "relative path", policy: SandboxPolicy{Exec: "/bin/sh", ReadWrite: []string{"rel"}}, want: `"rel" is not an absolute path`},
		{name: "relative program", policy: SandboxPolicy{Exec: "sh"}, want: `"sh" is not an absolute path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := onConfinedThread(t, tt.policy, work, "-c", "touch "+marker)
			require.ErrorContains(t, err, tt.want)
			require.NoFileExists(t, marker, "nothing runs unconfined")
			out, err = viaLauncher(t, tt.policy, work, "-c", "touch "+marker)
			var exitErr *exec.ExitError
			require.True(t, errors.As(err, &exitErr), "%v: %s", err, out)
			require.Equal(t, 126, exitErr.ExitCode())
			require.Contains(t, out, tt.want)
			require.NoFileExists(t, marker, "nothing runs unconfined")
		})
	}
	t.Run("unreadable policy", func(t *testing.T) {
		self, err := os.Executable()
		require.NoError(t, err)
		cmd := exec.Command(self, "-c", "touch "+marker)
		cmd.Env = append(os.Environ(), SandboxEnv+"={not json")
		out, err := cmd.CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(out), "read policy")
		require.NoFileExists(t, marker)
	})
}

// Confining a thread to start terraform restricts that thread alone: the
// server's other threads still read what they read, create files with their
// own umask and hold their capabilities, while confined commands run at once.
func TestConfinedThreadLeavesServerAlone(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "webhook-secret")
	require.NoError(t, os.WriteFile(secret, []byte("hook-5ecret-value"), 0o600))
	work := t.TempDir()
	oldMask := syscall.Umask(0o022)
	defer syscall.Umask(oldMask)
	capsBefore := procStatus(t)["CapEff"]

	var wg sync.WaitGroup
	outs := make([]string, 8)
	errs := make([]error, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = onConfinedThread(t, shPolicy(work), work, "-c", "umask; cat "+secret)
		}()
	}
	wg.Wait()
	for i := range outs {
		require.Error(t, errs[i], outs[i])
		require.Contains(t, outs[i], "0077")
		require.Contains(t, outs[i], "Permission denied")
		require.NotContains(t, outs[i], "hook-5ecret-value")
	}
	// Every thread of the server, the ones that confined themselves gone.
	for range 20 {
		b, err := os.ReadFile(secret)
		require.NoError(t, err)
		require.Equal(t, "hook-5ecret-value", string(b))
		runtime.Gosched()
	}
	created := filepath.Join(t.TempDir(), "created")
	require.NoError(t, os.WriteFile(created, nil, 0o666))
	requireMode(t, created, 0o644)
	require.Equal(t, capsBefore, procStatus(t)["CapEff"])
	require.Equal(t, "0", procStatus(t)["NoNewPrivs"], "the server process never gets no_new_privs")
}

// procStatus is /proc/self/status of the calling thread's process, by key.
func procStatus(t *testing.T) map[string]string {
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	status := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			status[k] = strings.TrimSpace(v)
		}
	}
	return status
}

// A host that refuses a thread its own filesystem attributes (a container's
// seccomp profile may refuse unshare) gets the launcher instead, confined
// alike; nothing ran on the refused thread, and later commands go straight
// to the launcher.
func TestRefusedUnshareFallsBackToTheLauncher(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "webhook-secret")
	require.NoError(t, os.WriteFile(secret, []byte("hook-5ecret-value"), 0o600))
	self, err := os.Executable()
	require.NoError(t, err)
	r, err := New("/bin/sh", WithSandbox(Sandbox{Launcher: self}), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	j, err := r.NewJob(JobConfig{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, j.Close()) })
	unshares := 0
	unshareFS = func() error { unshares++; return syscall.EPERM }
	t.Cleanup(func() {
		unshareFS = func() error { return unix.Unshare(unix.CLONE_FS) }
		threadConfinement.Store(true)
	})

	var out bytes.Buffer
	err = j.direct(context.Background(), &out, nil, "-c", "umask; cat "+secret)
	require.Error(t, err, out.String())
	require.Contains(t, out.String(), "0077")
	require.Contains(t, out.String(), "Permission denied")
	require.NotContains(t, out.String(), "hook-5ecret-value")
	require.Equal(t, 1, unshares)
	require.False(t, threadConfinement.Load())

	out.Reset()
	require.NoError(t, j.direct(context.Background(), &out, nil, "-c", "umask"), out.String())
	require.Equal(t, "0077\n", out.String())
	require.Equal(t, 1, unshares, "not tried again")
}

func TestCheckLandlockABI(t *testing.T) {
	tests := []struct {
		name string
		v    int
		err  error
		want string
	}{
		{name: "disabled", v: -1, err: errors.New("ENOSYS"), want: "landlock is not available on this kernel"},
		{name: "too old", v: 2, want: "this kernel offers Landlock ABI 2; the sandbox needs ABI 3"},
		{name: "enough", v: 3},
		{name: "newer", v: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkLandlockABI(tt.v, tt.err)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
	require.NoError(t, SandboxSupported(), "this host runs the sandbox tests: it must support Landlock ABI %d", MinLandlockABI)
}

// With the ports limited, sandboxed terraform connects only to them: the
// coordinator around the broker is out of reach, the broker's port is not.
func TestLauncherLimitsConnectPorts(t *testing.T) { bothWays(t, testLauncherLimitsConnectPorts) }

func testLauncherLimitsConnectPorts(t *testing.T, launch starter) {
	if err := SandboxConnectSupported(); err != nil {
		t.Fatalf("this kernel cannot limit ports (%v); the test needs Landlock ABI %d", err, MinConnectABI)
	}
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("allowed-port")) }))
	defer allowed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("other-port")) }))
	defer other.Close()
	port := func(s *httptest.Server) int { return s.Listener.Addr().(*net.TCPAddr).Port }
	work := t.TempDir()
	p := shPolicy(work)
	p.LimitConnect, p.ConnectPorts = true, []int{port(allowed)}

	out, err := launch(t, p, work, "-c", "curl -sS --noproxy '*' "+allowed.URL)
	require.NoError(t, err, out)
	require.Contains(t, out, "allowed-port")

	out, err = launch(t, p, work, "-c", "curl -sS --noproxy '*' "+other.URL)
	require.Error(t, err, out)
	require.NotContains(t, out, "other-port")

	// Unlimited, the same call goes through: the refusal above is the limit's.
	out, err = launch(t, shPolicy(work), work, "-c", "curl -sS --noproxy '*' "+other.URL)
	require.NoError(t, err, out)
	require.Contains(t, out, "other-port")
}

func TestConnectABIRefusedClearly(t *testing.T) {
	require.NoError(t, checkConnectABI(4, nil))
	require.EqualError(t, checkConnectABI(3, nil), "terraform.sandbox_connect_ports needs Landlock ABI 4 (Linux 6.7); this kernel offers 3")
	require.Error(t, checkConnectABI(0, errors.New("no landlock")))
	require.Error(t, SandboxPolicy{Exec: "/bin/sh", ConnectPorts: []int{70000}}.validate())
}
