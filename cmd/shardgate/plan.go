package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/terraform/runner"
)

func init() {
	register("plan", command{summary: "run terraform init/plan/show in a directory and judge the plan", run: runPlan})
}

const planSynopsis = "shardgate plan --dir DIR [--workspace NAME] [--var-file FILE]... [--lock-timeout DURATION] [--config FILE] [--label NAME]... [--attest STREAM_PREFIX]... [--format text|json|markdown]"

// runPlan plans a Terraform root directory and judges the plan. Exit 0 allowed,
// 1 denied, 2 bad usage or input, 3 terraform failed (a state lock still held at
// --lock-timeout included).
func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("plan", planSynopsis, stderr)
	dir := fs.String("dir", "", "Terraform root module directory")
	workspace := fs.String("workspace", "", "Terraform workspace (created when missing; default: the current one)")
	var varFiles stringList
	fs.Var(&varFiles, "var-file", "a Terraform variables file (repeatable)")
	lockTimeout := fs.Duration("lock-timeout", runner.DefaultLockTimeout, "how long to wait for a state lock held by someone else; never force-unlocks")
	tfBinary := fs.String("terraform", "", "terraform binary (default: ./bin/terraform, then terraform on PATH)")
	var jf judgeFlags
	jf.register(fs)
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	switch {
	case *dir == "":
		return usageError(stderr, "plan", "--dir is required (run 'shardgate plan --help')")
	case *lockTimeout < 0:
		return usageError(stderr, "plan", "--lock-timeout must not be negative")
	}
	if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		return usageError(stderr, "plan", "--dir %s is not a directory", *dir)
	}
	var absVarFiles []string
	for _, vf := range varFiles {
		abs, err := filepath.Abs(vf)
		if err != nil {
			return usageError(stderr, "plan", "--var-file %s: %v", vf, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return usageError(stderr, "plan", "--var-file %s does not exist", vf)
		}
		absVarFiles = append(absVarFiles, abs)
	}
	jg, err := newJudge(jf)
	if err != nil {
		return usageError(stderr, "plan", "%v", err)
	}
	bin, _, err := runner.FindTerraform(*tfBinary, "")
	if err != nil {
		fmt.Fprintf(stderr, "shardgate plan: %v\n", err)
		return exitTerraform
	}

	wait := runner.DefaultWaitPolicy()
	wait.Timeout = *lockTimeout
	// A person's own shell: unsandboxed, and terraform sees the caller's
	// environment (backend credentials, TF_VAR_*) as it would without us.
	r, err := runner.New(bin, runner.WithInheritEnv(), runner.WithWaitPolicy(wait), runner.WithOnLockWait(func(w runner.LockWait) {
		fmt.Fprintf(stderr, "shardgate plan: %s\n", lockWaitLine(w))
	}))
	if err != nil {
		fmt.Fprintf(stderr, "shardgate plan: %v\n", err)
		return exitTerraform
	}
	// A run killed with -9 leaves its scratch dir (saved plan, variable
	// files) behind: remove every one no live run holds.
	if removed, err := r.SweepScratch(); err != nil {
		fmt.Fprintf(stderr, "shardgate plan: %v\n", err)
	} else if len(removed) > 0 {
		fmt.Fprintf(stderr, "shardgate plan: removed %d scratch dir(s) left by killed runs\n", len(removed))
	}
	job, err := r.NewJob(runner.JobConfig{Dir: *dir, Workspace: *workspace, VarFiles: absVarFiles})
	if err != nil {
		fmt.Fprintf(stderr, "shardgate plan: %v\n", err)
		return exitTerraform
	}
	defer job.Close()

	cs, err := planJob(ctx, job)
	if err != nil {
		fmt.Fprintf(stderr, "shardgate plan: %s\n", terraformFailure(err))
		writeDiagnostics(stderr, runner.DiagnosticsOf(err))
		return exitTerraform
	}
	waits := []report.LockWait{}
	for _, w := range job.LockWaits() {
		waits = append(waits, report.LockWait(w))
	}
	return jg.evaluate(ctx, cs, waits, stdout, stderr, "plan")
}

// planJob runs init, plan and show, and parses the plan.
func planJob(ctx context.Context, job *runner.Job) (*planparse.ChangeSet, error) {
	if err := job.Init(ctx); err != nil {
		return nil, err
	}
	if _, err := job.Plan(ctx); err != nil {
		return nil, err
	}
	shown, err := job.Show(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := planparse.ParseBytes(shown.JSON)
	if err != nil {
		return nil, fmt.Errorf("read terraform's plan JSON: %w", err)
	}
	return cs, nil
}

func lockWaitLine(w runner.LockWait) string {
	l := w.Lock
	msg := fmt.Sprintf("the state is locked by %s; waiting (attempt %d, %s so far); shardgate never force-unlocks",
		l.Holder(), w.Attempt, w.Waited.Round(time.Second))
	if w.Orphaned {
		msg += "; the lock is old and may be orphaned: ask its holder before anyone runs 'terraform force-unlock'"
	}
	return msg
}

// writeDiagnostics prints terraform's diagnostics (already redacted and
// bounded by the runner) after the one-line reason, each line made safe for
// a terminal.
func writeDiagnostics(w io.Writer, diags []runner.Diagnostic) {
	for _, d := range diags {
		fmt.Fprintln(w)
		for _, line := range strings.Split(strings.TrimRight(d.String(), "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", report.Plain(line))
		}
	}
}

// terraformFailure is the reason printed for exit 3: the holder of a lock still
// held, or terraform's own (redacted) words.
func terraformFailure(err error) string {
	var lockErr *runner.StateLockError
	if errors.As(err, &lockErr) {
		waited := ""
		var timeout *runner.LockWaitTimeoutError
		if errors.As(err, &timeout) {
			waited = fmt.Sprintf(" after waiting %s", timeout.Waited.Round(time.Second))
		}
		return fmt.Sprintf("state lock still held%s by %s (raise --lock-timeout to wait longer; shardgate never force-unlocks)",
			waited, lockErr.Holder())
	}
	return strings.TrimSpace(err.Error())
}
