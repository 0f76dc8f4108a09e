package main

import (
	"context"
	"io"
	"os"
	"runtime"
)

func init() {
	register("check", command{summary: "judge a plan JSON file (terraform show -json) against the policies", run: runCheck})
}

const checkSynopsis = "shardgate check --plan FILE [--config FILE] [--label NAME]... [--attest STREAM_PREFIX]... [--format text|json|markdown]"

// runCheck judges one plan file. Exit 0 allowed, 1 denied, 2 bad usage or input.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", checkSynopsis, stderr)
	planPath := fs.String("plan", "", "plan JSON written by 'terraform show -json PLANFILE' (- reads stdin)")
	var jf judgeFlags
	jf.register(fs)
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	if *planPath == "" {
		return usageError(stderr, "check", "--plan is required (run 'shardgate check --help')")
	}
	// Nothing reads a check's heap profile: its sampled stacks held 1.4 MiB at
	// the end of a 10,000-instance check (docs/performance.md).
	runtime.MemProfileRate = 0
	restore, parsed := tuneCheckGC(*planPath)
	defer restore()
	// Compiling the policies and parsing the plan need each other's result only
	// to judge: on two cores they take the time of the longer one.
	judged := make(chan error, 1)
	var jg *judge
	go func() {
		var err error
		jg, err = newJudge(jf)
		judged <- err
	}()
	cs, planErr := readPlan(*planPath, os.Stdin)
	parsed()
	if err := <-judged; err != nil {
		return usageError(stderr, "check", "%v", err)
	}
	if planErr != nil {
		return usageError(stderr, "check", "%v", planErr)
	}
	return jg.evaluate(ctx, cs, nil, stdout, stderr, "check")
}
