// Package demo is `shardgate demo`: the whole story of one pull request on
// loopback, with no GitHub account. It wires what the bot's end-to-end tests
// wire (the coordinator simulator, the fake GitHub, a git repository with the
// example stream-group module, the real terraform and shardgate's service)
// and walks a scale that is too far from denied to applied, printing each
// version of shardgate's PR comment and the coordinator's final state.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/shardgate/shardgate"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Until is where the story stops.
type Until string

// The stopping points.
const (
	UntilAllowed Until = "allowed" // after the attestation: the PR is allowed
	UntilApplied Until = "applied" // after the merge, the apply and convergence
)

// Defaults of Options.
const (
	DefaultApplyTimeout = 3 * time.Minute
	DefaultTick         = 200 * time.Millisecond
)

// Options tune a run. The zero value runs the whole story, from any working
// directory: the example module is built into the program.
type Options struct {
	Terraform    string        // terraform binary; "" finds one like `shardgate plan`
	ModuleDir    string        // a stream-group module to commit; "" commits the embedded examples/modules/stream-group
	Until        Until         // UntilApplied when ""
	ApplyTimeout time.Duration // how long the apply on merge may take; DefaultApplyTimeout when 0
	Tick         time.Duration // the simulator's event-loop tick; DefaultTick when 0
	Keep         bool          // keep the work directory (its path is printed)
	Quiet        bool          // print the steps and verdicts, not the comments
	Out          io.Writer     // the story; os.Stdout when nil
	Log          io.Writer     // the service's JSON log; discarded when nil
}

// Step is one step of the story as shardgate left it.
type Step struct {
	Title   string
	Comment string // shardgate's PR comment after the step
	Check   string // the conclusion of the step's check run
}

// Result is what a run saw, for tests and callers.
type Result struct {
	Steps       []Step
	MergeSHA    string
	ApplyCheck  string                // conclusion of shardgate/apply: streams
	Groups      []coord.Group         // the coordinator's groups at the end
	ScaleEvents []coordsim.AuditEvent // audit events recorded after the merge
	WorkDir     string                // set when Keep
}

// ApplyTimeoutError says the apply on merge did not finish in time.
// Started says whether the apply's check run appeared at all: false means
// shardgate never started the apply (no check run within 30 seconds of the
// merge), true a slow or stuck one.
type ApplyTimeoutError struct {
	After   time.Duration
	Started bool
	Reason  string
}

func (e *ApplyTimeoutError) Error() string {
	return fmt.Sprintf("apply on merge did not complete within %s: %s", e.After, e.Reason)
}

// ErrUnexpected marks a run where shardgate did not do what the story
// expects (a verdict, a check conclusion, the coordinator's end state).
var ErrUnexpected = errors.New("unexpected outcome")

// Run plays the story. It returns the result so far with any error.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Until == "" {
		opts.Until = UntilApplied
	}
	if opts.Until != UntilAllowed && opts.Until != UntilApplied {
		return nil, fmt.Errorf("run demo: unknown stopping point %q (want %s or %s)", opts.Until, UntilAllowed, UntilApplied)
	}
	if opts.ApplyTimeout <= 0 {
		opts.ApplyTimeout = DefaultApplyTimeout
	}
	if opts.Tick <= 0 {
		opts.Tick = DefaultTick
	}
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	module := shardgate.StreamGroupModule()
	if opts.ModuleDir != "" {
		if _, err := os.Stat(filepath.Join(opts.ModuleDir, "main.tf")); err != nil {
			return nil, fmt.Errorf("run demo: the example module %s is missing (pass the directory of a stream-group module, or leave --module out for the built-in one): %w", opts.ModuleDir, err)
		}
		module = os.DirFS(opts.ModuleDir)
	}
	tf, version, err := runner.FindTerraform(opts.Terraform, "")
	if err != nil {
		return nil, fmt.Errorf("run demo: %w (run 'make tools')", err)
	}
	root, err := os.MkdirTemp("", "shardgate-demo-")
	if err != nil {
		return nil, fmt.Errorf("run demo: work directory: %w", err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, fmt.Errorf("run demo: work directory: %w", err)
	}
	w := &world{opts: opts, module: module, tb: newProgramTB(root, opts.Out), root: root, tf: tf, tfVer: version, clock: fakeclock.Following()}
	if w.secret, err = newSecret(); err == nil {
		w.simPW, err = newSecret()
	}
	if err != nil {
		_ = os.RemoveAll(root)
		return nil, fmt.Errorf("run demo: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	res := &Result{}
	err = w.tb.runStory(func() error { return w.play(ctx, res) })
	cancel()
	w.tb.close()
	if errs := w.tb.Errors(); err == nil && len(errs) > 0 {
		err = fmt.Errorf("%w: the fake GitHub reported %d problem(s), the first: %s", ErrUnexpected, len(errs), errs[0])
	}
	if opts.Keep {
		res.WorkDir = root
		fmt.Fprintf(opts.Out, "\nwork directory kept: %s\n", root)
	} else {
		_ = os.RemoveAll(root)
	}
	if err != nil {
		return res, fmt.Errorf("run demo: %w", err)
	}
	return res, nil
}
