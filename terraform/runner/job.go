package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
)

// Job runs terraform in one working directory. Its methods must not be called
// concurrently (the *tfexec.Terraform's output writers are per-instance state);
// run jobs in parallel instead.
type Job struct {
	r         *Runner
	cfg       JobConfig
	tf        *tfexec.Terraform
	env       map[string]string
	vars      []string // "name=value" for -var
	varFile   string   // sensitive variables, in the scratch dir while terraform plans
	sensitive map[string]string
	scratch   string
	unlock    func() // releases the scratch dir's lock (see SweepScratch)
	planFile  string
	execPath  string // terraform, or the sandbox launcher
	// confine is the sandbox policy direct confines terraform to on a thread
	// of its own (runConfined); nil: unsandboxed.
	confine *SandboxPolicy
	// procs is the running command's cgroup: its processes start in it and
	// are killed when it ends (lifetime.go); nil: none or not contained.
	procs    *jobCgroup
	redactor *Redactor
	// backendFile holds SecretBackendConfig during init ("" without).
	backendFile string
	policy      WaitPolicy
	onLockWait  func(LockWait)

	mu         sync.Mutex
	lastOutput string
	started    time.Duration // the running command's sandbox start (runConfined); under mu

	waitsMu   sync.Mutex
	lockWaits []*LockWaitRecord
}

// NewJob prepares a job for cfg.Dir. Call Close when done with it.
func (r *Runner) NewJob(cfg JobConfig) (*Job, error) {
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("new job: %w", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("new job: %s is not a directory", cfg.Dir)
	}
	cfg.Dir = dir
	if cfg.Root, err = jobRoot(cfg); err != nil {
		return nil, fmt.Errorf("new job: %w", err)
	}
	j := &Job{r: r, redactor: NewRedactor(), policy: r.policy, onLockWait: r.onLockWait}
	if err := j.makeScratch(&cfg); err != nil {
		j.Close()
		return nil, fmt.Errorf("new job: %w", err)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(dir, ".terraform")
	}
	j.cfg = cfg
	env, vars, sensitive, err := r.jobEnv(cfg)
	if err != nil {
		j.Close()
		return nil, fmt.Errorf("new job: %w", err)
	}
	j.env = env
	if cfg.Wait != nil {
		j.policy = *cfg.Wait
	}
	j.policy = j.policy.withDefaults()
	if cfg.OnLockWait != nil {
		j.onLockWait = cfg.OnLockWait
	}
	for _, v := range sensitive {
		j.redactor.Add(v)
	}
	for _, m := range []map[string]string{r.secretEnv, cfg.SecretEnv} {
		for _, v := range m {
			j.redactor.Add(v)
		}
	}
	j.vars = varArgs(vars)

	switch {
	case cfg.PlanFile == "":
		j.planFile = filepath.Join(j.scratch, "plan", "tfplan")
	case filepath.IsAbs(cfg.PlanFile):
		j.planFile = cfg.PlanFile
	default:
		// Terraform resolves it from Dir; so must our own checks.
		j.planFile = filepath.Join(dir, cfg.PlanFile)
	}
	for _, v := range cfg.SecretBackendConfig {
		j.redactor.Add(v)
	}
	if len(cfg.SecretBackendConfig) > 0 {
		// Written just before init and removed after it; JSON, so that no
		// value needs HCL quoting.
		j.backendFile = filepath.Join(j.scratch, "backend.secret.tf.json")
	}
	if len(sensitive) > 0 {
		// Written just before each plan and removed after it (plan.go).
		j.sensitive = sensitive
		j.varFile = filepath.Join(j.scratch, "sensitive.tfvars.json")
	}
	if j.execPath, err = j.isolate(); err != nil {
		j.Close()
		return nil, fmt.Errorf("new job: %w", err)
	}
	if j.tf, err = tfexec.NewTerraform(dir, j.execPath); err != nil {
		j.Close()
		return nil, fmt.Errorf("new job: %w", err)
	}
	if err := j.tf.SetEnv(j.env); err != nil {
		j.Close()
		return nil, fmt.Errorf("new job: %w", err)
	}
	if err := j.tf.SetWaitDelay(r.grace); err != nil {
		j.Close()
		return nil, fmt.Errorf("new job: %w", err)
	}
	return j, nil
}

func varArgs(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out) // stable command lines for tests and logs
	return out
}

// Close removes the job's scratch directory (including the default plan file).
func (j *Job) Close() error {
	var errs []error
	if j.scratch != "" {
		if err := os.RemoveAll(j.scratch); err != nil {
			errs = append(errs, fmt.Errorf("remove job scratch dir: %w", err))
		}
		if j.unlock != nil {
			j.unlock()
			j.unlock = nil
		}
	}
	return errors.Join(errs...)
}

// PlanFile is where Plan saves the plan and Apply reads it.
func (j *Job) PlanFile() string { return j.planFile }

// Redact removes this job's secrets and credential-like text from s.
func (j *Job) Redact(s string) string { return j.redactor.Redact(s) }

// Output is the redacted tail of the last command's output. It waits while
// a command runs.
func (j *Job) Output() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.lastOutput
}

// Init runs terraform init and selects the workspace.
func (j *Job) Init(ctx context.Context) error {
	if err := j.init(ctx); err != nil {
		return err
	}
	if j.cfg.Workspace == "" || j.cfg.Workspace == j.currentWorkspace() {
		return nil
	}
	return j.selectWorkspace(ctx, j.cfg.Workspace)
}

// currentWorkspace is the workspace terraform runs in without a `workspace
// select`: the one its data dir records, or "default" when it records none
// (TF_WORKSPACE, which would override both, never reaches terraform: see
// ReservedEnv). Empty when the record cannot be read: then select.
func (j *Job) currentWorkspace() string {
	dataDir := j.cfg.DataDir
	if !filepath.IsAbs(dataDir) {
		dataDir = filepath.Join(j.cfg.Dir, dataDir) // terraform resolves it from Dir
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "environment"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "default"
	case err != nil:
		return ""
	}
	if name := strings.TrimSpace(string(b)); name != "" {
		return name
	}
	return "default"
}

func (j *Job) init(ctx context.Context) error {
	unlock, err := lockPluginCache(ctx, j.r.pluginCache)
	if err != nil {
		return fmt.Errorf("terraform init: wait for plugin cache: %w", err)
	}
	defer unlock()
	// The arguments tfexec's Init gives terraform >= 0.15 (see direct).
	args := []string{"init", "-no-color", "-input=false", "-backend=true", "-get=true", "-upgrade=false"}
	for _, bc := range j.cfg.BackendConfig {
		args = append(args, "-backend-config="+bc)
	}
	args = append(args, j.cfg.InitArgs...)
	if j.backendFile != "" {
		if err := writePrivateJSON(j.backendFile, j.cfg.SecretBackendConfig); err != nil {
			return fmt.Errorf("terraform init: backend settings: %w", err)
		}
		defer os.Remove(j.backendFile)
		args = append(args, "-backend-config="+j.backendFile)
	}
	return j.run(ctx, "init", func(ctx context.Context, out io.Writer) error { return j.direct(ctx, out, nil, args...) })
}

func (j *Job) selectWorkspace(ctx context.Context, name string) error {
	err := j.run(ctx, "workspace", func(ctx context.Context, out io.Writer) error {
		return j.direct(ctx, out, nil, "workspace", "select", "-no-color", name)
	})
	if err == nil || !strings.Contains(j.Output(), "doesn't exist") {
		return err
	}
	// Creating a workspace takes the state lock on some backends (pg).
	return j.waitForLock(ctx, func(ctx context.Context, lt time.Duration) error {
		return j.run(ctx, "workspace", func(ctx context.Context, out io.Writer) error {
			return j.direct(ctx, out, nil, "workspace", "new", "-no-color", "-lock-timeout="+lt.String(), name)
		})
	})
}

// Plan runs terraform plan into the saved plan file, waiting for the state
// lock as the policy allows. It reports whether the plan has changes.
func (j *Job) Plan(ctx context.Context) (changed bool, err error) {
	done, err := j.beforePlan()
	if err != nil {
		return false, fmt.Errorf("terraform plan: %w", err)
	}
	defer func() { done(err) }()
	err = j.waitForLock(ctx, func(ctx context.Context, lt time.Duration) error {
		return j.run(ctx, "plan", func(ctx context.Context, out io.Writer) error {
			err := j.direct(ctx, out, nil, j.planArgs(lt)...)
			// -detailed-exitcode: 2 is a plan with changes.
			if exitErr, ok := errAs[*exec.ExitError](err); ok && exitErr.ExitCode() == 2 {
				changed, err = true, nil
			}
			return err
		})
	})
	return changed, err
}

// planArgs are the arguments tfexec's Plan gives terraform >= 0.15 with the
// job's options (see direct): the plan file, the lock timeout, the variable
// files (the sensitive ones last) and the variables.
func (j *Job) planArgs(lockTimeout time.Duration) []string {
	args := []string{"plan", "-no-color", "-input=false", "-detailed-exitcode",
		"-lock-timeout=" + lockTimeout.String(), "-out=" + j.planFile}
	for _, f := range j.cfg.VarFiles {
		args = append(args, "-var-file="+f)
	}
	if j.varFile != "" {
		args = append(args, "-var-file="+j.varFile)
	}
	args = append(args, "-lock=true", "-parallelism=10", "-refresh=true")
	args = append(args, j.cfg.PlanArgs...)
	for _, v := range j.vars {
		args = append(args, "-var", v)
	}
	return args
}

// Shown is a saved plan as `terraform show -json` prints it. The human
// rendering is a second terraform run that no flow needs; ask ShowText.
type Shown struct {
	// JSON is `terraform show -json` verbatim, for the decision engine to
	// parse. It is NOT redacted: it holds sensitive values (marked in its
	// *_sensitive fields); never log or post it.
	JSON []byte
}

// Plan decodes JSON with terraform-json; fine for small plans, the decision
// engine parses JSON itself.
func (s *Shown) Plan() (*tfjson.Plan, error) {
	var p tfjson.Plan
	if err := json.Unmarshal(s.JSON, &p); err != nil {
		return nil, fmt.Errorf("decode plan json: %w", err)
	}
	return &p, nil
}

// Show renders the saved plan as JSON (`terraform show -json`), unparsed:
// tfexec's ShowPlanFile would decode it into *tfjson.Plan, and large plans
// would then be decoded twice.
func (j *Job) Show(ctx context.Context) (*Shown, error) {
	var stdout bytes.Buffer
	err := j.run(ctx, "show", func(ctx context.Context, out io.Writer) error {
		return j.direct(ctx, out, &stdout, "show", "-json", "-no-color", j.planFile)
	})
	if err != nil {
		return nil, err
	}
	return &Shown{JSON: jsonDocument(stdout.Bytes())}, nil
}

// jsonDocument drops what precedes the JSON document on stdout: OpenTofu
// prints its CLI configuration warnings there (terraform, to stderr).
func jsonDocument(out []byte) []byte {
	if len(out) == 0 || out[0] == '{' {
		return out
	}
	if i := bytes.Index(out, []byte("\n{")); i >= 0 {
		return out[i+1:]
	}
	return out
}

// ShowText renders the saved plan for a person (`terraform show`), redacted.
// It runs terraform once more: call it only when the text is shown to someone.
func (j *Job) ShowText(ctx context.Context) (string, error) {
	var stdout bytes.Buffer
	err := j.run(ctx, "show", func(ctx context.Context, out io.Writer) error {
		return j.direct(ctx, out, &stdout, "show", "-no-color", j.planFile)
	})
	if err != nil {
		return "", err
	}
	return j.redactor.Redact(stdout.String()), nil
}

// Apply applies the saved plan file, waiting for the state lock as the policy
// allows. A plan made before someone else changed the state fails with
// *StalePlanError.
func (j *Job) Apply(ctx context.Context) error {
	if _, err := os.Stat(j.planFile); err != nil {
		return fmt.Errorf("apply saved plan: no plan file: run Plan first")
	}
	defer j.afterApply()
	return j.waitForLock(ctx, func(ctx context.Context, lt time.Duration) error {
		return j.run(ctx, "apply", func(ctx context.Context, _ io.Writer) error {
			opts := []tfexec.ApplyOption{tfexec.DirOrPlan(j.planFile), tfexec.LockTimeout(lt.String())}
			if j.cfg.Parallelism > 0 {
				opts = append(opts, tfexec.Parallelism(j.cfg.Parallelism))
			}
			return j.tf.Apply(ctx, opts...)
		})
	})
}
