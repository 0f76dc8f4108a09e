package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shardgate/shardgate/internal/demo"
)

const demoSynopsis = "shardgate demo [--terraform PATH] [--module DIR] [--until allowed|applied] [--apply-timeout DURATION] [--keep] [--quiet] [--log FILE]"

// envTerraform is set by the Makefile to the terraform `make tools` installed.
const envTerraform = "SHARDGATE_TERRAFORM"

func init() {
	register("demo", command{
		summary: "play one pull request from denied to applied on loopback (no GitHub account)",
		run:     runDemo,
	})
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", demoSynopsis, stderr)
	tf := fs.String("terraform", os.Getenv(envTerraform), "terraform binary (default $"+envTerraform+", else ./bin/terraform, else terraform on PATH)")
	module := fs.String("module", demo.DefaultModuleDir, "the stream-group module committed to the demo repository")
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
		return usageError(stderr, "demo", "--until must be %s or %s, got %q", demo.UntilAllowed, demo.UntilApplied, *until)
	}
	if *applyTimeout <= 0 {
		return usageError(stderr, "demo", "--apply-timeout must be positive, got %s", *applyTimeout)
	}
	opts := demo.Options{Terraform: *tf, ModuleDir: *module, Until: u, ApplyTimeout: *applyTimeout,
		Keep: *keep, Quiet: *quiet, Out: stdout}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "shardgate demo: open log: %v\n", err)
			return 1
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
		fmt.Fprintf(stderr, "shardgate demo: %v (this shardgate does not apply on merge yet)\n", err)
	default:
		fmt.Fprintf(stderr, "shardgate demo: %v\n", err)
	}
	return 1
}
