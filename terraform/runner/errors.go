package runner

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Failure describes a terraform command that ran and failed. Tail is the
// redacted end of its combined output; Err is the process-level cause (an exit
// status), never terraform's raw output, so printing the chain cannot leak.
type Failure struct {
	Command  string // "init", "plan", "show", "apply", "workspace"
	ExitCode int    // -1 when terraform did not run to an exit
	Tail     string
	Err      error
	// Diagnostics are terraform's errors and warnings read from Tail, in
	// full (summary, detail, file and line), bounded and redacted.
	Diagnostics []Diagnostic
}

func (f *Failure) message() string {
	msg := "terraform " + f.Command + " failed"
	if f.ExitCode >= 0 {
		msg += fmt.Sprintf(" (exit %d)", f.ExitCode)
	}
	if d, errs, ok := headline(f.Diagnostics); ok {
		msg += ": " + d.Headline()
		if errs > 1 {
			msg += fmt.Sprintf(" (and %d more %s)", errs-1, plural(errs-1, "error"))
		}
	} else if s := summary(f.Tail); s != "" {
		msg += ": " + s
	} else if f.Err != nil {
		msg += ": " + f.Err.Error()
	}
	return msg
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// DiagnosticsOf returns the terraform diagnostics err carries (a failed init,
// workspace, plan, show or apply), nil when it carries none.
func DiagnosticsOf(err error) []Diagnostic {
	var f interface{ failure() *Failure }
	if errors.As(err, &f) {
		return f.failure().Diagnostics
	}
	return nil
}

func (f *Failure) failure() *Failure { return f }

// InitError is a failed `terraform init` (or workspace selection, which is part
// of preparing the working directory).
type InitError struct{ Failure }

func (e *InitError) Error() string { return e.message() }
func (e *InitError) Unwrap() error { return e.Err }

// PlanError is a failed `terraform plan` that was not a state-lock conflict.
type PlanError struct{ Failure }

func (e *PlanError) Error() string { return e.message() }
func (e *PlanError) Unwrap() error { return e.Err }

// ShowError is a failed `terraform show` of the saved plan.
type ShowError struct{ Failure }

func (e *ShowError) Error() string { return e.message() }
func (e *ShowError) Unwrap() error { return e.Err }

// ApplyError is a failed `terraform apply` of a saved plan that was neither a
// state-lock conflict nor a stale plan.
type ApplyError struct{ Failure }

func (e *ApplyError) Error() string { return e.message() }
func (e *ApplyError) Unwrap() error { return e.Err }

// StalePlanError means the saved plan can no longer be applied because the
// state changed after it was made; the only fix is a new plan.
type StalePlanError struct {
	PlanFile string
	Reason   string // terraform's headline, e.g. "Saved plan is stale"
	Tail     string
}

func (e *StalePlanError) Error() string {
	return "apply saved plan: " + strings.ToLower(e.Reason) +
		": the state changed after the plan was made; plan again"
}

// InterruptedError means the context ended while terraform ran. Terraform got
// SIGINT; Killed says it did not stop within the grace period and was killed,
// which can leave a state lock behind that an operator must look at.
type InterruptedError struct {
	Command string
	Cause   error // context.Canceled or context.DeadlineExceeded
	Killed  bool
	Started bool // false when the context ended before terraform ran
	Grace   time.Duration
	Tail    string
}

func (e *InterruptedError) Error() string {
	how := "terraform stopped after SIGINT"
	if !e.Started {
		how = "terraform was not started"
	} else if e.Killed {
		how = fmt.Sprintf("terraform did not stop within %s of SIGINT and was killed", e.Grace)
	}
	return fmt.Sprintf("terraform %s interrupted (%v): %s", e.Command, e.Cause, how)
}

func (e *InterruptedError) Unwrap() error { return e.Cause }

// BinaryError means no usable terraform was found: none at all, or one that
// does not run or is older than MinVersion.
type BinaryError struct {
	Path    string // empty when nothing was found
	Version string // empty when unknown
	Reason  string
}

func (e *BinaryError) Error() string {
	if e.Path == "" {
		return "find terraform: " + e.Reason
	}
	return "find terraform: " + e.Path + ": " + e.Reason
}

// summary picks the first "Error: ..." headline of terraform output, which is
// what a human needs in a one-line error; the full tail stays on the error.
func summary(tail string) string {
	for _, line := range strings.Split(tail, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(line, "│╷╵ "))
		if strings.HasPrefix(line, "Error: ") {
			return strings.TrimPrefix(line, "Error: ")
		}
	}
	return ""
}

// errAs is errors.As with the target made for the caller.
func errAs[T error](err error) (T, bool) {
	var t T
	ok := errors.As(err, &t)
	return t, ok
}
