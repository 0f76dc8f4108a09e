// Command bench is shardgate's whole-process benchmark, run by `make bench`: it
// times `shardgate check --plan FILE --format json` as users run it, one process
// per plan, side by side with conftest running cmd/shardgate-bench/policy (the same rules in
// Rego, over the raw plan), on denied and allowed plans of 1,000 to 50,000
// stream-group instances; and `shardgate plan` against the terraform commands it
// wraps. Plans up to -real-max instances are made by the real terraform; larger
// ones by planparsetest's synthesizer (see plans.go), which the run compares with
// terraform's own plan at the real sizes. Plans are cached under -cache.
//
// It reports; it asserts nothing but that both tools reach the same decision with
// the same findings. Targets (docs/performance.md) are printed beside the figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// idleRuns are the runs of `shardgate version` at the start and at the end.
const idleRuns = 5

type options struct {
	repo, cache                    string
	shardgate, conftest, terraform string
	sizes                          []int
	realMax                        int
	soloRealMax                    int         // the same for the one-stream-per-instance shapes
	runs                           map[int]int // per size
	planOverhead                   int         // instances of the plan-overhead run, 0 for none
	planRuns                       int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var sizes, runs string
	fs.StringVar(&o.repo, "repo", ".", "repository root")
	fs.StringVar(&o.cache, "cache", ".bench", "where generated roots, plans and outputs are kept")
	fs.StringVar(&o.shardgate, "shardgate", "bin/shardgate", "the shardgate binary to time (make build)")
	fs.StringVar(&o.conftest, "conftest", "bin/conftest", "the conftest binary to compare with (make bench-tools)")
	fs.StringVar(&o.terraform, "terraform", "bin/terraform", "terraform 1.5.7 (make tools)")
	fs.StringVar(&sizes, "sizes", "1000,10000,50000", "module instances per plan")
	fs.StringVar(&runs, "runs", "1000:5,10000:5,50000:3", "timed runs per tool and case, by size (others: 3)")
	fs.IntVar(&o.realMax, "real-max", 1000, "plans up to this many instances are made by terraform, larger ones synthesized")
	fs.IntVar(&o.soloRealMax, "solo-real-max", 10000, "one-stream-per-instance plans up to this many instances are made by terraform, larger ones synthesized")
	fs.IntVar(&o.planOverhead, "plan-overhead", 1000, "instances of the shardgate plan vs raw terraform run (0: skip)")
	fs.IntVar(&o.planRuns, "plan-runs", 7, "runs per side of the plan-overhead measurement")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.sizes, err = intList(sizes); err != nil {
		return o, fmt.Errorf("-sizes: %w", err)
	}
	o.runs = map[int]int{}
	for _, kv := range strings.Split(runs, ",") {
		k, v, ok := strings.Cut(kv, ":")
		n, err1 := strconv.Atoi(k)
		r, err2 := strconv.Atoi(v)
		if !ok || err1 != nil || err2 != nil || r < 1 {
			return o, fmt.Errorf("-runs: %q is not size:runs", kv)
		}
		o.runs[n] = r
	}
	for _, p := range []*string{&o.repo, &o.cache, &o.shardgate, &o.conftest, &o.terraform} {
		if *p, err = filepath.Abs(*p); err != nil {
			return o, fmt.Errorf("resolve path: %w", err)
		}
	}
	return o, nil
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return 2
	}
	log := func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) }
	if err := measureAll(ctx, o, stdout, log); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func measureAll(ctx context.Context, o options, w io.Writer, log func(string, ...any)) error {
	if err := os.MkdirAll(o.cache, 0o755); err != nil {
		return fmt.Errorf("make cache dir: %w", err)
	}
	for _, bin := range []string{o.shardgate, o.conftest, o.terraform} {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s is missing (make build tools bench-tools)", bin)
		}
	}
	started := time.Now()
	load := loadAverage()
	cases, notes, err := preparePlans(ctx, o, log)
	if err != nil {
		return err
	}
	floorBin, err := buildFloor(ctx, o)
	if err != nil {
		return err
	}
	log("idle: shardgate version, %d runs", idleRuns)
	idleBefore, err := measureIdle(ctx, o, idleRuns)
	if err != nil {
		return err
	}
	var results []checkResult
	for _, c := range cases {
		runs := o.runs[c.size]
		if runs == 0 {
			runs = 3
		}
		log("check: %d instances, %s, %d runs each", c.size, c.name, runs)
		r, err := measureCheck(ctx, o, floorBin, c, runs)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	idleAfter, err := measureIdle(ctx, o, idleRuns)
	if err != nil {
		return err
	}
	var ov *overhead
	if o.planOverhead > 0 {
		got, err := measurePlanOverhead(ctx, o, o.planOverhead, log)
		if err != nil {
			return err
		}
		ov = &got
	}
	printReport(w, o, machine{cpu: cpuModel(), cores: cores(), loadBefore: load, loadAfter: loadAverage(),
		took: time.Since(started)}, idleBefore.merge(idleAfter), results, notes, ov)
	return nil
}
