// Package runner runs terraform for shardgate: init, plan to a saved plan
// file, show it, apply it. It is the only package that executes terraform.
//
// Each Job has its own working directory, data dir and *tfexec.Terraform
// (whose output writers are per-instance state). Terraform sees only an
// allow-listed environment, never prompts, and its output is redacted before
// anything leaves the job. When another operation holds the state lock, the
// job reports the holder, waits with backoff and retries; it never breaks or
// deletes a lock.
//
// For untrusted configurations (pull requests) WithSandbox confines
// terraform, its providers and provisioners to the job's own files with
// Landlock (sandbox.go), and WithRegistryProvidersOnly keeps providers to
// the registry and the plugin cache (cliconfig.go). Saved plans and
// sensitive variable files stay in a private scratch dir (scratch.go).
package runner

import (
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"time"
)

// DefaultGracePeriod is how long terraform gets to stop after SIGINT before
// it is killed. Terraform needs time to release locks and persist state;
// killing it sooner is what leaves locks behind.
const DefaultGracePeriod = 30 * time.Second

// Runner holds what all jobs share: the terraform binary, the provider plugin
// cache, the environment allow-list and the lock-wait defaults. It is safe
// for concurrent use; jobs are not shared between goroutines.
type Runner struct {
	bin         string
	pluginCache string
	policy      WaitPolicy
	onLockWait  func(LockWait)
	onCommand   func(command string, d time.Duration, err error)
	grace       time.Duration
	passEnv     []string
	env         map[string]string
	secretEnv   map[string]string
	tailBytes   int
	tempDir     string

	// Isolation of untrusted configurations (sandbox.go, cliconfig.go).
	sandbox      *Sandbox
	containment  Containment // how sandboxed jobs' processes end (lifetime.go)
	registryOnly bool
	inheritEnv   bool

	lookupEnv func(string) (string, bool)
	environ   func() []string
	now       func() time.Time
	rand      func() float64
}

// Option configures a Runner.
type Option func(*Runner)

// WithPluginCacheDir shares a provider plugin cache between jobs
// (TF_PLUGIN_CACHE_DIR). Inits that use it are serialised (see cache.go).
func WithPluginCacheDir(dir string) Option { return func(r *Runner) { r.pluginCache = dir } }

// WithWaitPolicy sets the default state-lock wait policy of jobs.
func WithWaitPolicy(p WaitPolicy) Option { return func(r *Runner) { r.policy = p } }

// WithOnLockWait sets the default callback told about each lock wait. It is
// called on the job's goroutine before it waits, so it must return quickly.
func WithOnLockWait(fn func(LockWait)) Option { return func(r *Runner) { r.onLockWait = fn } }

// WithCommandObserver sets a callback told about every terraform command a
// job ran ("init", "workspace", "plan", "show", "apply"): how long it took
// and its error (nil on success, the typed error callers get otherwise). It
// is called on the job's goroutine once the command ended, so it must return
// quickly; metrics are its use.
func WithCommandObserver(fn func(command string, d time.Duration, err error)) Option {
	return func(r *Runner) { r.onCommand = fn }
}

// WithGracePeriod sets how long terraform may take to stop after SIGINT.
func WithGracePeriod(d time.Duration) Option { return func(r *Runner) { r.grace = d } }

// WithPassEnv adds names of variables copied from the process environment
// (for example AWS_PROFILE) to DefaultPassEnv.
func WithPassEnv(names ...string) Option {
	return func(r *Runner) { r.passEnv = append(r.passEnv, names...) }
}

// WithEnv sets variables for every job. TF_VAR_x entries become -var x=...
func WithEnv(env map[string]string) Option {
	return func(r *Runner) { maps.Copy(r.env, env) }
}

// WithTempDir sets where jobs make their private scratch directories
// (saved plans, sensitive variable files). Default: os.TempDir().
func WithTempDir(dir string) Option { return func(r *Runner) { r.tempDir = dir } }

// New returns a Runner that runs the terraform binary at bin (see FindTerraform).
func New(bin string, opts ...Option) (*Runner, error) {
	if bin == "" {
		return nil, &BinaryError{Reason: "no terraform binary given"}
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, &BinaryError{Path: bin, Reason: "not found"}
	}
	r := &Runner{
		bin:       bin,
		policy:    DefaultWaitPolicy(),
		grace:     DefaultGracePeriod,
		env:       map[string]string{},
		secretEnv: map[string]string{},
		tailBytes: DefaultTailBytes,
		lookupEnv: os.LookupEnv,
		environ:   os.Environ,
		now:       time.Now,
		rand:      rand.Float64,
	}
	for _, o := range opts {
		o(r)
	}
	if r.grace <= 0 {
		return nil, fmt.Errorf("new runner: grace period must be positive, got %s", r.grace)
	}
	if err := r.checkSandbox(); err != nil {
		return nil, fmt.Errorf("new runner: %w", err)
	}
	if r.sandbox != nil {
		r.containment = ProcessContainment()
	}
	return r, nil
}

// Binary is the terraform binary the runner executes.
func (r *Runner) Binary() string { return r.bin }

// JobConfig describes one terraform working directory to run.
type JobConfig struct {
	// Dir is the root module directory.
	Dir string
	// Root is the tree a sandboxed terraform may read and write: the whole
	// checkout, when Dir's modules or variable files live beside it.
	// Default Dir; Dir must be inside it.
	Root string
	// DataDir is TF_DATA_DIR; default Dir/.terraform, or with
	// WithRegistryProvidersOnly a fresh directory in the job's scratch, so
	// that nothing a checkout ships under .terraform is used. Give each
	// concurrent job on one Dir its own.
	DataDir string
	// Workspace is selected after init (created when missing); empty means
	// the current one.
	Workspace string
	// VarFiles are passed as -var-file, relative to Dir.
	VarFiles []string
	// Vars are passed as -var name=value (parsed like TF_VAR_name).
	Vars map[string]string
	// SensitiveVars are string variables whose values are redacted from
	// output. They reach terraform through a private var file, not the
	// command line, where any local user could read them.
	SensitiveVars map[string]string
	// BackendConfig entries are passed to init as -backend-config.
	BackendConfig []string
	// SecretBackendConfig are backend settings whose values are secrets:
	// init reads them from a private file in the job's scratch (written just
	// before init and removed after it), never the command line or the
	// checkout, and they are redacted from output.
	SecretBackendConfig map[string]string
	// InitArgs and PlanArgs are added to init and plan (a project's own);
	// paths in them are relative to Dir.
	InitArgs, PlanArgs []string
	// Env and SecretEnv add variables for this job on top of the runner's.
	Env       map[string]string
	SecretEnv map[string]string
	// PlanFile is where Plan saves and Apply reads the plan (relative to
	// Dir); default a file in the job's private scratch directory, removed
	// by Close. Set it to apply, in a later job, a plan saved earlier.
	PlanFile string
	// ReadWrite are further directories this job's sandboxed terraform
	// alone may write, such as its project's own local-state directory;
	// missing ones are created (0700).
	ReadWrite []string
	// ConnectPorts are TCP ports this job's sandboxed terraform may also
	// connect to when Sandbox.ConnectPorts limits them (its coordinator
	// broker's port). When set, they limit the job's ports by themselves
	// wherever the kernel can (Landlock ABI 4): terraform reaches nothing
	// but them.
	ConnectPorts []int
	// Parallelism limits concurrent operations of Apply (-parallelism); 0
	// keeps terraform's default. Coordinator scales are stream-wide, so the
	// bot applies one stream-group instance at a time.
	Parallelism int
	// Wait overrides the runner's lock-wait policy, OnLockWait its callback.
	Wait       *WaitPolicy
	OnLockWait func(LockWait)
	// Output, when set, receives terraform's stdout and stderr of every
	// command as it runs, line by line, redacted with the job's secrets
	// (`show`'s JSON and text renderings excepted: they go to the caller
	// only). An Output that is a LockWaitSink is also told about state-lock
	// waits. Writes to it must not block for long.
	Output io.Writer
}

// LockWaitSink is a JobConfig.Output that shows the state lock its job
// waits on: StateLockWait is called before each wait, and with nil once the
// command got past the lock (or gave up).
type LockWaitSink interface {
	StateLockWait(w *LockWait)
}
