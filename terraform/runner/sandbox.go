package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Terraform run for a pull request executes code its author chose: providers
// from any registry namespace, provisioners, file() of any path. A sandboxed
// runner therefore never starts terraform unconfined. init, workspace, plan
// and show are started from a thread of their own that confines itself with
// Landlock, drops every capability and then forks terraform, which with its
// providers and provisioners inherits the confinement (runConfined). apply,
// which tfexec starts, goes through a launcher (the shardgate binary,
// re-executed) with the job's policy in SandboxEnv; the launcher confines
// its own thread the same way and execs terraform. Both enforce the same
// policy; the thread saves the launcher's start (a large binary's runtime and
// package initialisation) on every command. The server process itself is
// never restricted.

// SandboxEnv carries a job's SandboxPolicy, as JSON, to the launcher. A binary
// whose main calls RunSandboxLauncher acts as the launcher exactly when it is
// set; the launcher removes it before terraform starts.
const SandboxEnv = "SHARDGATE_SANDBOX"

// MinLandlockABI is the oldest Landlock ABI the sandbox accepts. ABI 3
// (Linux 6.2) is the first that confines truncate(2): with less, sandboxed
// code could empty files it cannot read, such as the server's store.
const MinLandlockABI = 3

// Sandbox configures WithSandbox.
type Sandbox struct {
	// Launcher is the executable started in terraform's place: one whose
	// main calls RunSandboxLauncher before anything else. shardgate is one
	// (os.Executable()).
	Launcher string
	// ReadOnly are further files or directories terraform may read, beyond
	// SystemReadOnly, the terraform binary and the plugin cache.
	ReadOnly []string
	// ReadWrite are further files or directories every job may write, such
	// as the directory of a local backend's state shared by all jobs. Any
	// pull request's code can then change what is there.
	ReadWrite []string
	// ConnectPorts, when set, are the only TCP ports terraform may connect
	// to (Landlock ABI 4, Linux 6.7); it may then bind no TCP port. A job's
	// own ports (its coordinator broker's) are added (JobConfig.ConnectPorts).
	// A job with ports of its own is limited to them by default wherever the
	// kernel can (DirectConnectStopped): only its broker is reached.
	ConnectPorts []int
}

// WithSandbox runs every terraform command of the runner's jobs confined:
// they may read and write only the job's Root, data dir and scratch
// directory; read the terraform binary, SystemReadOnly and sb.ReadOnly; write
// the plugin cache during init only. HOME and TMPDIR point into the scratch
// directory. It implies WithRegistryProvidersOnly.
func WithSandbox(sb Sandbox) Option {
	return func(r *Runner) {
		r.sandbox = &sb
		r.registryOnly = true
	}
}

// SystemReadOnly are what terraform, providers and provisioners read on any
// host: programs and shared libraries, CA certificates (not /etc/ssl, whose
// private/ holds keys), name resolution, users and groups, time zones and
// /proc (other processes' environments and memory stay closed: Landlock
// denies ptrace-mode access outside the sandbox). Missing ones are skipped.
var SystemReadOnly = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/ssl/certs", "/etc/ssl/cert.pem", "/etc/ssl/ca-bundle.pem", "/etc/ssl/openssl.cnf",
	"/etc/pki/tls/certs", "/etc/pki/tls/cacert.pem", "/etc/pki/ca-trust/extracted",
	"/etc/ca-certificates", "/etc/alternatives",
	"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
	"/etc/services", "/etc/protocols", "/etc/passwd", "/etc/group",
	"/etc/localtime", "/etc/timezone", "/etc/ld.so.cache", "/etc/gitconfig", "/etc/mime.types",
	"/proc", "/dev/urandom", "/dev/random",
}

// SystemReadWrite are the device files a sandboxed process may also write.
// Never all of /dev: a process running as root could read the disks.
var SystemReadWrite = []string{"/dev/null", "/dev/zero", "/dev/full"}

// SandboxPolicy is what the launcher enforces. Paths are absolute; a
// directory grants its whole tree.
type SandboxPolicy struct {
	// Exec is the program started once confined: the terraform binary.
	Exec string `json:"exec"`
	// ReadWrite may be read, written and executed; each must exist.
	ReadWrite []string `json:"rw"`
	// ReadOnly may be read and executed; missing ones grant nothing.
	ReadOnly []string `json:"ro"`
	// PluginCache is writable when the command is `init` (which runs no
	// provider) and read-only otherwise, so that no code a plan runs can
	// plant a binary a later apply would start.
	PluginCache string `json:"plugin_cache,omitempty"`
	// LimitConnect restricts TCP: connect only to ConnectPorts, bind none.
	LimitConnect bool  `json:"limit_connect,omitempty"`
	ConnectPorts []int `json:"connect_ports,omitempty"`
	// Cgroup is the job's cgroup directory, which the launcher joins before
	// anything else, so that terraform and all it starts die with the
	// command (lifetime.go); empty: none.
	Cgroup string `json:"cgroup,omitempty"`
	// PIDNamespace starts terraform as the init of a PID namespace of its
	// own, so that all it starts dies with it (lifetime.go).
	PIDNamespace bool `json:"pid_namespace,omitempty"`
}

// grants splits the policy into read-write and read-only paths for the
// terraform command args[0]; the plugin cache goes to one or the other.
func (p SandboxPolicy) grants(args []string) (rw, ro []string) {
	rw, ro = slices.Clone(p.ReadWrite), slices.Clone(p.ReadOnly)
	ro = append(ro, p.Exec)
	if p.PluginCache != "" {
		if len(args) > 0 && args[0] == "init" {
			rw = append(rw, p.PluginCache)
		} else {
			ro = append(ro, p.PluginCache)
		}
	}
	return rw, ro
}

func (p SandboxPolicy) validate() error {
	for _, path := range slices.Concat([]string{p.Exec}, p.ReadWrite, p.ReadOnly) {
		if !filepath.IsAbs(path) {
			return fmt.Errorf("sandbox policy: %q is not an absolute path", path)
		}
	}
	if p.PluginCache != "" && !filepath.IsAbs(p.PluginCache) {
		return fmt.Errorf("sandbox policy: plugin cache %q is not an absolute path", p.PluginCache)
	}
	if p.Cgroup != "" && !filepath.IsAbs(p.Cgroup) {
		return fmt.Errorf("sandbox policy: cgroup %q is not an absolute path", p.Cgroup)
	}
	for _, port := range p.ConnectPorts {
		if port < 1 || port > 65535 {
			return fmt.Errorf("sandbox policy: %d is not a TCP port", port)
		}
	}
	return nil
}

// RunSandboxLauncher makes the calling binary the sandbox launcher when
// SandboxEnv is set: it confines the process and replaces it with the
// policy's program, given args. It returns launched=false at once when
// SandboxEnv is unset; otherwise it returns only on failure, after printing
// why to stderr, with exit code 126 (terraform never started). Call it first
// thing in main, before any goroutine or file is opened.
func RunSandboxLauncher(args []string) (code int, launched bool) {
	raw, ok := os.LookupEnv(SandboxEnv)
	if !ok {
		return 0, false
	}
	var p SandboxPolicy
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		fmt.Fprintf(os.Stderr, "shardgate sandbox: read policy from %s: %v\n", SandboxEnv, err)
		return 126, true
	}
	if p.PIDNamespace {
		// terraform must be a child, the namespace's init: the launcher
		// waits for it rather than becoming it.
		return runAsInit(p, args), true
	}
	err := ExecSandboxed(p, args)
	fmt.Fprintf(os.Stderr, "shardgate sandbox: %v\n", err)
	return 126, true
}

// launcherEnv is the environment of the confined program: the launcher's
// own, without the policy.
func launcherEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, SandboxEnv+"=")
	})
}

// checkSandbox refuses a sandbox that cannot work: no launcher, or a kernel
// without Landlock. Nothing falls back to running unconfined.
func (r *Runner) checkSandbox() error {
	if r.sandbox == nil {
		return nil
	}
	if r.sandbox.Launcher == "" {
		return errors.New("sandbox: no launcher given (the shardgate binary)")
	}
	if _, err := os.Stat(r.sandbox.Launcher); err != nil {
		return fmt.Errorf("sandbox: launcher: %w", err)
	}
	if err := SandboxSupported(); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// jobRoot is cfg.Root made absolute, cfg.Dir by default; Dir must be in it.
func jobRoot(cfg JobConfig) (string, error) {
	if cfg.Root == "" {
		return cfg.Dir, nil
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, cfg.Dir); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%s is not inside its root %s", cfg.Dir, root)
	}
	return root, nil
}

// isolate applies WithRegistryProvidersOnly and WithSandbox to the job's
// environment and returns the program tfexec starts: terraform, or the
// launcher that confines it.
func (j *Job) isolate() (string, error) {
	if !j.r.registryOnly {
		return j.r.bin, nil
	}
	cliConfig, err := j.writeCLIConfig()
	if err != nil || j.r.sandbox == nil {
		return j.r.bin, err
	}
	// HOME too: git, SDKs and terraform itself read configuration there.
	tmp := filepath.Join(j.scratch, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", fmt.Errorf("make sandbox home: %w", err)
	}
	j.env["HOME"], j.env["TMPDIR"] = tmp, tmp
	p, err := j.sandboxPolicy(cliConfig, tmp)
	if err != nil {
		return "", err
	}
	p.PIDNamespace = j.r.containment.Mechanism == ContainPIDNamespace
	j.confine = &p
	return j.r.sandbox.Launcher, j.encodePolicy()
}

// encodePolicy hands the job's policy to the launcher, through the
// environment of the commands to come.
func (j *Job) encodePolicy() error {
	js, err := json.Marshal(*j.confine)
	if err != nil {
		return fmt.Errorf("encode sandbox policy: %w", err)
	}
	j.env[SandboxEnv] = string(js)
	if j.tf != nil {
		return j.tf.SetEnv(j.env)
	}
	return nil
}

// sandboxPolicy grants the job its own files: Root (the checkout), data
// dir, scratch tmp and saved plan read-write; the CLI config, variable files
// and CA bundle the environment names read-only; and what the Sandbox adds.
func (j *Job) sandboxPolicy(cliConfig, tmp string) (SandboxPolicy, error) {
	var p SandboxPolicy
	var err error
	abs := func(path string) string {
		if path == "" || err != nil {
			return path
		}
		var a string
		a, err = filepath.Abs(path)
		return a
	}
	p.Exec = abs(j.r.bin)
	p.PluginCache = abs(j.r.pluginCache)
	// The plan file: its own dir in scratch, or the file the caller named
	// (which Plan creates before terraform runs).
	plan := filepath.Dir(j.planFile)
	if j.cfg.PlanFile != "" {
		plan = j.planFile
	}
	for _, dir := range j.cfg.ReadWrite {
		if err == nil {
			err = os.MkdirAll(dir, 0o700)
		}
	}
	p.ReadWrite = slices.Concat([]string{j.cfg.Root, abs(j.cfg.DataDir), tmp, plan}, SystemReadWrite, j.r.sandbox.ReadWrite, j.cfg.ReadWrite)
	p.ReadOnly = slices.Concat(SystemReadOnly, j.r.sandbox.ReadOnly, []string{cliConfig})
	if j.varFile != "" {
		p.ReadOnly = append(p.ReadOnly, j.varFile)
	}
	if j.backendFile != "" {
		p.ReadOnly = append(p.ReadOnly, j.backendFile)
	}
	for _, vf := range j.cfg.VarFiles {
		if !filepath.IsAbs(vf) {
			vf = filepath.Join(j.cfg.Dir, vf) // terraform resolves them from Dir
		}
		p.ReadOnly = append(p.ReadOnly, vf)
	}
	if len(j.r.sandbox.ConnectPorts) > 0 || len(j.cfg.ConnectPorts) > 0 && SandboxConnectSupported() == nil {
		p.LimitConnect = true
		p.ConnectPorts = slices.Concat(j.r.sandbox.ConnectPorts, j.cfg.ConnectPorts)
	}
	for _, name := range []string{"SSL_CERT_FILE", "SSL_CERT_DIR"} {
		for _, path := range filepath.SplitList(j.env[name]) {
			p.ReadOnly = append(p.ReadOnly, abs(path))
		}
	}
	if err != nil {
		return SandboxPolicy{}, fmt.Errorf("sandbox policy: %w", err)
	}
	return p, p.validate()
}
