package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/shardgate/shardgate/internal/phases"
)

// DefaultPassEnv are the variables terraform inherits from the process
// environment; nothing else of it reaches terraform (cloud credentials, the
// bot's own secrets). Add more with WithPassEnv, or set values with WithEnv.
var DefaultPassEnv = []string{
	"PATH", "HOME", "USER", "TMPDIR", "LANG", "LC_ALL",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	// Where provider mirrors and registry credentials are configured.
	"TF_CLI_CONFIG_FILE",
}

// runnerManagedEnv are set by the runner itself; callers use JobConfig fields.
var runnerManagedEnv = map[string]string{
	"TF_DATA_DIR":         "JobConfig.DataDir",
	"TF_PLUGIN_CACHE_DIR": "WithPluginCacheDir",
	SandboxEnv:            "WithSandbox",
}

// managedEnv are the variables this runner sets itself, each with what
// callers use instead.
func (r *Runner) managedEnv() map[string]string {
	m := maps.Clone(runnerManagedEnv)
	if r.registryOnly {
		m["TF_CLI_CONFIG_FILE"] = "WithRegistryProvidersOnly"
	}
	if r.sandbox != nil {
		m["HOME"] = "WithSandbox: the job's scratch dir"
		m["TMPDIR"] = "WithSandbox: the job's scratch dir"
	}
	return m
}

const varEnvPrefix = "TF_VAR_"

// ReservedEnv says whether name is set by the runner or by tfexec under some
// runner configuration, so that no configuration may set it. TF_VAR_ names
// are variables and never reserved.
func ReservedEnv(name string) bool {
	if strings.HasPrefix(name, varEnvPrefix) {
		return false
	}
	if _, ok := runnerManagedEnv[name]; ok {
		return true
	}
	switch name {
	case "TF_CLI_CONFIG_FILE", "HOME", "TMPDIR":
		return true
	}
	return len(tfexec.ProhibitedEnv(map[string]string{name: ""})) > 0
}

// processEnv is what terraform inherits from the process environment: the
// allow-listed variables, or with WithInheritEnv all of it except what the
// runner or tfexec manage. TF_VAR_x entries come back as variables.
func (r *Runner) processEnv() (env, vars map[string]string) {
	env, vars = map[string]string{}, map[string]string{}
	managed := r.managedEnv()
	if r.inheritEnv {
		for _, kv := range r.environ() {
			k, v, _ := strings.Cut(kv, "=")
			if name, ok := strings.CutPrefix(k, varEnvPrefix); ok && name != "" {
				vars[name] = v
			} else if _, ok := managed[k]; !ok && len(tfexec.ProhibitedEnv(map[string]string{k: v})) == 0 {
				env[k] = v
			}
		}
		return env, vars
	}
	for _, name := range slices.Concat(DefaultPassEnv, r.passEnv) {
		if _, ok := managed[name]; ok {
			continue // e.g. TF_CLI_CONFIG_FILE: the runner writes its own
		}
		if v, ok := r.lookupEnv(name); ok {
			env[name] = v
		}
	}
	return env, vars
}

// jobEnv builds the complete environment of a job's terraform: the process
// variables (see processEnv), the runner's and job's own, then the
// variables the runner manages. TF_VAR_x entries are returned as variables,
// because tfexec refuses them in SetEnv; other variables tfexec manages
// itself (TF_LOG, TF_CLI_ARGS, TF_WORKSPACE, ...) are an error.
func (r *Runner) jobEnv(cfg JobConfig) (env, vars, sensitive map[string]string, err error) {
	env, vars = r.processEnv()
	maps.Copy(vars, cfg.Vars)
	sensitive = maps.Clone(cfg.SensitiveVars)
	if sensitive == nil {
		sensitive = map[string]string{}
	}
	managed := r.managedEnv()
	var bad []string
	add := func(src map[string]string, toVars map[string]string) {
		for k, v := range src {
			if name, ok := strings.CutPrefix(k, varEnvPrefix); ok && name != "" {
				toVars[name] = v
				continue
			}
			if field, ok := managed[k]; ok {
				bad = append(bad, k+" (use "+field+")")
				continue
			}
			if len(tfexec.ProhibitedEnv(map[string]string{k: v})) > 0 {
				bad = append(bad, k)
				continue
			}
			env[k] = v
		}
	}
	add(r.env, vars)
	add(cfg.Env, vars)
	add(r.secretEnv, sensitive)
	add(cfg.SecretEnv, sensitive)
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, nil, nil, fmt.Errorf("environment variables managed by the runner: %s", strings.Join(bad, ", "))
	}
	// A variable given both ways is sensitive: never print it.
	for k := range sensitive {
		delete(vars, k)
	}

	env["TF_DATA_DIR"] = cfg.DataDir
	// No update checks or usage reporting from a gate.
	env["CHECKPOINT_DISABLE"] = "1"
	if r.pluginCache != "" {
		env["TF_PLUGIN_CACHE_DIR"] = r.pluginCache
	}
	return env, vars, sensitive, nil
}

// run runs one terraform command with fresh output capture, keeps its
// redacted tail and turns a failure into a typed error. fn runs the command
// through tfexec (whose writers are set to the capture) or directly (see
// direct), writing to out.
func (j *Job) run(ctx context.Context, command string, fn func(ctx context.Context, out io.Writer) error) error {
	out := newTailBuffer(j.r.tailBytes)
	j.mu.Lock()
	defer j.mu.Unlock()
	begin := j.r.now()
	// Truncated because terraform's lock times have no monotonic reading.
	started := begin.Truncate(time.Millisecond)
	w, flush := j.tee(out)
	j.tf.SetStdout(w)
	j.tf.SetStderr(w)
	j.started = 0
	err := j.contained(func() error { return fn(ctx, w) })
	took := j.r.now().Sub(begin)
	phases.Add(ctx, phases.Terraform, took-j.started)
	j.tf.SetStdout(nil)
	j.tf.SetStderr(nil)
	flush()
	tail := j.redactor.Redact(out.String())
	j.lastOutput = tail
	if err == nil {
		j.observe(command, took, nil)
		return nil
	}
	err = j.classify(ctx, command, err, tail)
	if lockErr, ok := err.(*StateLockError); ok && lockErr.describesRequester(command, started, terraformWho()) {
		*lockErr = StateLockError{Message: lockErr.Message, Command: command}
	}
	j.observe(command, took, err)
	return err
}

// observe tells the runner's command observer, if any, about a command.
func (j *Job) observe(command string, d time.Duration, err error) {
	if j.r.onCommand != nil {
		j.r.onCommand(command, d, err)
	}
}

// classify maps a failed command to the error type callers branch on. The
// error from tfexec carries terraform's raw stderr in its text; only the
// process-level cause is kept, the output reaches callers redacted as Tail.
func (j *Job) classify(ctx context.Context, command string, err error, tail string) error {
	if ctx.Err() != nil {
		_, ran := errAs[*exec.ExitError](err)
		return &InterruptedError{Command: command, Cause: ctx.Err(), Killed: wasKilled(err),
			Started: ran || errors.Is(err, exec.ErrWaitDelay), Grace: j.r.grace, Tail: tail}
	}
	if lockErr := parseStateLock(tail); lockErr != nil {
		lockErr.Command = command
		return lockErr
	}
	if command == "apply" {
		for _, reason := range []string{"Saved plan is stale", "Saved plan does not match the given state"} {
			if strings.Contains(tail, reason) {
				return &StalePlanError{PlanFile: j.planFile, Reason: reason, Tail: tail}
			}
		}
	}
	f := Failure{Command: command, ExitCode: -1, Tail: tail, Err: j.safeCause(err), Diagnostics: parseDiagnostics(tail, true)}
	if exitErr, ok := errAs[*exec.ExitError](err); ok {
		f.ExitCode = exitErr.ExitCode()
	}
	switch command {
	case "init", "workspace":
		return &InitError{f}
	case "plan":
		return &PlanError{f}
	case "apply":
		return &ApplyError{f}
	default:
		return &ShowError{f}
	}
}

// safeCause keeps the first line of err (tfexec appends stderr after it),
// redacted.
func (j *Job) safeCause(err error) error {
	if exitErr, ok := errAs[*exec.ExitError](err); ok {
		return exitErr
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	return errors.New(j.redactor.Redact(first))
}

// wasKilled tells a terraform that ignored SIGINT for the whole grace period
// (and was killed, or left its output pipes open) from one that stopped.
func wasKilled(err error) bool {
	if errors.Is(err, exec.ErrWaitDelay) {
		return true
	}
	exitErr, ok := errAs[*exec.ExitError](err)
	return ok && exitErr.ProcessState != nil && exitErr.ProcessState.String() == "signal: killed"
}

// direct runs terraform with args itself, with the job's environment and the
// same SIGINT-then-kill cancellation as tfexec's. tfexec asks `terraform
// version` again for every *tfexec.Terraform (one per job) before init, show
// and workspace commands, to check flags that terraform >= MinVersion always
// has; the runner asks once per binary (CheckTerraform) and runs those
// commands here instead. stdout nil sends stdout to out with stderr.
func (j *Job) direct(ctx context.Context, out, stdout io.Writer, args ...string) error {
	if stdout == nil {
		stdout = out
	}
	if j.confine == nil || !threadConfinement.Load() {
		// Unsandboxed, or through the launcher (execPath, SandboxEnv).
		return j.command(ctx, out, stdout, j.execPath, j.directEnv(false), args).Run()
	}
	begin := time.Now()
	cmd := j.command(ctx, out, stdout, j.confine.Exec, j.directEnv(true), args)
	err := runConfined(*j.confine, args, cmd, func() {
		j.started = time.Since(begin)
		phases.Add(ctx, phases.SandboxStart, j.started)
	})
	if errors.Is(err, errNoThreadFS) {
		// Nothing ran: this host forbids a thread its own umask (a
		// container's seccomp profile can refuse unshare). The launcher
		// confines terraform as well, only slower to start.
		threadConfinement.Store(false)
		return j.command(ctx, out, stdout, j.execPath, j.directEnv(false), args).Run()
	}
	return err
}

// threadConfinement is off once unshare(CLONE_FS) was refused: sandboxed
// commands then all go through the launcher.
var threadConfinement atomic.Bool

func init() { threadConfinement.Store(true) }

// command is terraform (or the launcher) at path with args, with the same
// SIGINT-then-kill cancellation as tfexec's.
func (j *Job) command(ctx context.Context, out, stdout io.Writer, path string, env, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = j.cfg.Dir
	cmd.Env = env
	cmd.Stdout = stdout
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	if j.procs != nil {
		j.procs.procAttr(cmd.SysProcAttr)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = j.r.grace
	return cmd
}

// directEnv is the job environment plus what tfexec adds to every command:
// automation mode, and logging off so that it cannot pollute the output.
func (j *Job) directEnv(confined bool) []string {
	env := maps.Clone(j.env)
	if confined {
		delete(env, SandboxEnv) // for the launcher only: terraform starts confined
	}
	env["TF_IN_AUTOMATION"] = "1"
	env["TF_INPUT"] = "0"
	for _, k := range []string{"TF_LOG", "TF_LOG_CORE", "TF_LOG_PATH", "TF_LOG_PROVIDER"} {
		env[k] = ""
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
