// Package planrun plans one project of a checkout with the real terraform —
// init, plan, show -json — and reads the plan into a coordinator change set.
// What went wrong is data, not an error: the one-line reason and terraform's
// diagnostics, redacted with the job's secrets, for the caller to report.
// The plan flow of pull requests and the drift checks both plan this way.
package planrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/phases"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Request is one project to plan.
type Request struct {
	// Checkout is the whole tree terraform may read (modules beside the
	// project); the project's dir is relative to it.
	Checkout string
	Project  repoconfig.Project
	// Commit is what the checkout holds, for messages (may be empty).
	Commit string
	// SecretEnv is the plan phase's credentials (plan_env), never apply_env.
	SecretEnv map[string]string
	// Output receives terraform's output as it runs (the live log); may be nil.
	Output io.Writer
	// OnLockWait hears each wait for the Terraform state lock; may be nil.
	OnLockWait func(runner.LockWait)
	// Writable are the directories this project's job alone may write
	// (runner.JobConfig.ReadWrite).
	Writable []string
	// Coordinators, when set, are reached only through a read-only
	// coordinator broker (coordbroker) with their credentials: terraform
	// reads them and holds no credential, and a plan that tries to change
	// one fails.
	Coordinators []coordbroker.Coordinator
	// Egress are the other hosts (host:port, *.suffix:port) terraform may
	// reach through the broker (terraform.egress); every other is refused.
	Egress []string
	// Binaries, when set, choose the terraform of the project (Binaries.For)
	// instead of the runner Run is given.
	Binaries *Binaries
	// LookupEnv reads the server's environment for the project's secret_env
	// and backend_config_env; default os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

func (r Request) lookupEnv() func(string) (string, bool) {
	if r.LookupEnv != nil {
		return r.LookupEnv
	}
	return os.LookupEnv
}

// Result is what the plan gave: a change set, or why there is none.
type Result struct {
	// Dir is the project's directory in the checkout.
	Dir       string
	ChangeSet *planparse.ChangeSet
	// Error is why there is no change set, one line, redacted with the job's
	// secrets; Diagnostics are terraform's, redacted the same way.
	Error       string
	Diagnostics []report.Diagnostic
	// LockWaits are the state-lock waits the job went through.
	LockWaits []runner.LockWaitRecord
	// Binary is the terraform the plan ran with Request.Binaries (its
	// apply must run the same), zero without.
	Binary runner.Identity
}

// Failed says whether the plan gave no change set.
func (r Result) Failed() bool { return r.ChangeSet == nil }

// Run plans req's project with r; it never applies.
func Run(ctx context.Context, r *runner.Runner, req Request) (res Result) {
	p := req.Project
	res = Result{Dir: filepath.Join(req.Checkout, filepath.FromSlash(p.Dir))}
	if fi, err := os.Stat(res.Dir); err != nil || !fi.IsDir() {
		res.Error = fmt.Sprintf("project %q: directory %s does not exist", p.Name, p.Dir)
		if req.Commit != "" {
			res.Error += " at " + pullreq.ShortSHA(req.Commit)
		}
		return res
	}
	if req.Binaries != nil {
		b, err := req.Binaries.For(req.Checkout, p)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		r, res.Binary = b.Runner, b.Identity
	}
	env, ports, broker, stop, err := readOnlyBroker(coordbroker.Config{Coordinators: req.Coordinators, Egress: req.Egress,
		ReadOnly: true, Output: req.Output})
	if err != nil {
		res.Error = report.FirstLine(err.Error())
		return res
	}
	defer stop()
	cfg := runner.JobConfig{Dir: res.Dir, Root: req.Checkout, Workspace: p.Workspace,
		ConnectPorts: ports, SecretEnv: req.SecretEnv, Output: req.Output, OnLockWait: req.OnLockWait, ReadWrite: req.Writable}
	if err := ProjectJob(&cfg, p.VarFiles, p.ProjectKeys, env, req.lookupEnv()); err != nil {
		res.Error = err.Error()
		return res
	}
	job, err := r.NewJob(cfg)
	if err != nil {
		res.Error = report.FirstLine(err.Error())
		return res
	}
	defer job.Close()
	defer func() { res.LockWaits = job.LockWaits() }()
	if err := job.Init(ctx); err != nil {
		return failed(res, job, err)
	}
	_, err = job.Plan(ctx)
	if refused, ok := refusal(broker); ok {
		res.Error = "a plan only reads the coordinator; shardgate " + refused
		return res
	}
	if err != nil {
		return failed(res, job, err)
	}
	shown, err := job.Show(ctx)
	if err != nil {
		return failed(res, job, err)
	}
	endParse := phases.Start(ctx, phases.Parse)
	cs, err := planparse.ParseBytes(shown.JSON)
	endParse()
	if err != nil {
		res.Error = "terraform's plan could not be read: " + err.Error()
		return res
	}
	res.ChangeSet = cs
	return res
}

// failed records a failed terraform command: its error and terraform's
// diagnostics, redacted with the job's secrets (the server's are removed
// where the result is shown).
func failed(res Result, job *runner.Job, err error) Result {
	res.Error = job.Redact(err.Error())
	for _, d := range runner.DiagnosticsOf(err) {
		rd := report.Diagnostic(d)
		for _, p := range []*string{&rd.Summary, &rd.Detail, &rd.File, &rd.Context, &rd.Snippet} {
			*p = job.Redact(*p)
		}
		res.Diagnostics = append(res.Diagnostics, rd)
	}
	return res
}

// readOnlyBroker starts the plan's broker, through which terraform reaches
// the coordinators (read-only) and the egress list, and nothing else: the
// environment and port terraform gets, and stop, which ends it.
func readOnlyBroker(cfg coordbroker.Config) (env map[string]string, ports []int, b *coordbroker.Broker, stop func(), err error) {
	b, err = coordbroker.Start(cfg)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	dir, err := os.MkdirTemp("", "shardgate-broker-")
	if err != nil {
		_ = b.Close()
		return nil, nil, nil, nil, fmt.Errorf("start the coordinator broker: %w", err)
	}
	stop = func() {
		_ = b.Close()
		_ = os.RemoveAll(dir)
	}
	bundle, err := b.WriteCABundle(dir)
	if err != nil {
		stop()
		return nil, nil, nil, nil, err
	}
	return b.Env(bundle), []int{b.Port()}, b, stop, nil
}

// refusal names the first call the plan's broker refused.
func refusal(b *coordbroker.Broker) (string, bool) {
	if b == nil {
		return "", false
	}
	c, ok := b.Refused()
	if !ok {
		return "", false
	}
	return "refused a coordinator call that changes it: " + c.Summary, true
}

// ProjectJob fills what a project adds to its terraform runs into cfg, the
// same for the plan, the merge's re-plan and apply, and drift: var files (Dir
// relative), init and plan arguments, its plain env (under env, which holds
// shardgate's own variables and wins) and, read from the server's
// environment by lookupEnv, its secret_env and backend_config_env values.
// A server variable that is not set is an error naming it, never a value.
func ProjectJob(cfg *runner.JobConfig, varFiles []string, k repoconfig.ProjectKeys, env map[string]string, lookupEnv func(string) (string, bool)) error {
	for _, vf := range varFiles {
		cfg.VarFiles = append(cfg.VarFiles, filepath.Join(cfg.Dir, filepath.FromSlash(vf)))
	}
	cfg.InitArgs = append(cfg.InitArgs, k.InitArgs...)
	cfg.PlanArgs = append(cfg.PlanArgs, k.PlanArgs...)
	cfg.Env = map[string]string{}
	for name, v := range k.Env {
		cfg.Env[name] = v
	}
	for name, v := range env {
		cfg.Env[name] = v
	}
	var missing []string
	reveal := func(m map[string]string, into *map[string]string) {
		for key, server := range m {
			v, ok := lookupEnv(server)
			if !ok {
				missing = append(missing, server)
				continue
			}
			if *into == nil {
				*into = map[string]string{}
			}
			(*into)[key] = v
		}
	}
	secret := map[string]string{}
	for name, v := range cfg.SecretEnv {
		secret[name] = v
	}
	cfg.SecretEnv = secret
	reveal(k.SecretEnv, &cfg.SecretEnv)
	reveal(k.BackendConfigEnv, &cfg.SecretBackendConfig)
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("the project's secret_env or backend_config_env names %s, not set in the shardgate server's environment", strings.Join(missing, ", "))
	}
	return nil
}
