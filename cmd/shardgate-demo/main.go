// Command shardgate-demo plays one pull request from denied to applied on
// loopback, with no GitHub account (cmd/shardgate-demo/demo): the coordinator
// simulator, the fake GitHub, the real terraform and shardgate's service.
//
// It is a binary of its own so that the fake GitHub and its OpenAPI
// validator never ship inside the service: `make demo` builds it next to
// bin/shardgate, and `shardgate demo` runs it from there. Everything it
// needs besides terraform is built in, so it runs from any directory.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/shardgate/shardgate/cmd/shardgate-demo/demo"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Exit codes, as shardgate's commands use them.
const (
	exitOK     = 0
	exitFailed = 1 // the story did not go as it should
	exitUsage  = 2
)

const synopsis = "shardgate demo [--terraform PATH] [--module DIR] [--until allowed|applied] [--apply-timeout DURATION] [--keep] [--quiet] [--log FILE]"

// envTerraform is set by the Makefile to the terraform `make tools` installed.
const envTerraform = "SHARDGATE_TERRAFORM"

func main() {
	// First: the demo's service confines terraform by re-executing this
	// binary as the sandbox launcher (runner.WithSandbox).
	if code, launched := runner.RunSandboxLauncher(os.Args[1:]); launched {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runDemo(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// defaultTerraform is $SHARDGATE_TERRAFORM, else the terraform beside this
// binary (`make tools` installs it into bin/, where `make demo` builds the
// demo), else "" to look further from the working directory and PATH.
func defaultTerraform() string {
	if p := os.Getenv(envTerraform); p != "" {
		return p
	}
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(self), "terraform")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return ""
}

// runDemo parses the flags, plays the story and returns the exit code: 0
// when it ended as it should, 1 when it did not, 2 for bad usage.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(stderr)
	tf := fs.String("terraform", defaultTerraform(), "terraform binary (default $"+envTerraform+", else the terraform beside this binary, else ./bin/terraform, else terraform on PATH)")
	module := fs.String("module", "", "a stream-group module to commit to the demo repository (default: examples/modules/stream-group, built in)")
	until := fs.String("until", string(demo.UntilApplied), "stop once the PR is allowed, or go on to merge and apply: allowed or applied")
	applyTimeout := fs.Duration("apply-timeout", demo.DefaultApplyTimeout, "how long the apply on merge may take, convergence included")
	keep := fs.Bool("keep", false, "keep the work directory (git repository, terraform state, shardgate's store)")
	quiet := fs.Bool("quiet", false, "print the steps and verdicts, not the full comments")
	logFile := fs.String("log", "", "write the service's JSON log to this file")
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	u := demo.Until(*until)
	if u != demo.UntilAllowed && u != demo.UntilApplied {
		return usageError(stderr, "--until must be %s or %s, got %q", demo.UntilAllowed, demo.UntilApplied, *until)
	}
	if *applyTimeout <= 0 {
		return usageError(stderr, "--apply-timeout must be positive, got %s", *applyTimeout)
	}
	opts := demo.Options{Terraform: *tf, ModuleDir: *module, Until: u, ApplyTimeout: *applyTimeout,
		Keep: *keep, Quiet: *quiet, Out: stdout}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "shardgate demo: open log: %v\n", err)
			return exitFailed
		}
		defer f.Close()
		opts.Log = f
	}
	start := time.Now()
	_, err := demo.Run(ctx, opts)
	var timeout *demo.ApplyTimeoutError
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "\nshardgate demo: done in %s\n", time.Since(start).Round(time.Second))
		return exitOK
	case errors.As(err, &timeout) && !timeout.Started:
		fmt.Fprintf(stderr, "shardgate demo: %v (shardgate never started the apply on merge)\n", err)
	default:
		fmt.Fprintf(stderr, "shardgate demo: %v\n", err)
	}
	return exitFailed
}
