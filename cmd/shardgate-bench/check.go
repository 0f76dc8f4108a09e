package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// checkResult is one case judged by both tools.
type checkResult struct {
	c         planCase
	shardgate stats
	conftest  stats
	floor     stats     // bench/floor.cpp's simdjson walk
	findings  []finding // what both found
}

func shardgateCheck(o options, c planCase) proc {
	args := []string{"check", "--plan", c.path, "--format", "json"}
	for _, p := range c.attest {
		args = append(args, "--attest", p)
	}
	return proc{name: o.shardgate, args: args}
}

func conftestTest(o options, c planCase) proc {
	args := []string{"test", "--policy", filepath.Join(o.repo, "cmd", "shardgate-bench", "policy"), "--output", "json", "--no-color"}
	if c.data != "" {
		args = append(args, "--data", c.data)
	}
	return proc{name: o.conftest, args: append(args, c.path)}
}

// measureCheck times both tools on one case, interleaved, then checks that they
// reached the same decision with the same findings: a comparison of two tools
// that judge differently would measure nothing.
func measureCheck(ctx context.Context, o options, floorBin string, c planCase, runs int) (checkResult, error) {
	want := 1
	if c.allowed {
		want = 0
	}
	wrap := func(tool string, p proc) func(context.Context, io.Writer) (sample, error) {
		return func(ctx context.Context, out io.Writer) (sample, error) {
			s, err := runOnce(ctx, p, out)
			if err == nil && s.exit != want {
				err = fmt.Errorf("%s on %s exited %d, want %d", tool, filepath.Base(c.path), s.exit, want)
			}
			return s, err
		}
	}
	outS := filepath.Join(o.cache, "shardgate.out")
	outC := filepath.Join(o.cache, "conftest.out")
	floor := func(ctx context.Context, out io.Writer) (sample, error) {
		s, err := runOnce(ctx, floorWalk(floorBin, c), out)
		if err == nil && s.exit != 0 {
			err = fmt.Errorf("the simdjson floor on %s exited %d", filepath.Base(c.path), s.exit)
		}
		return s, err
	}
	got, err := alternateAll(ctx, runs, []runner{
		{wrap("shardgate", shardgateCheck(o, c)), outS},
		{wrap("conftest", conftestTest(o, c)), outC},
		{floor, filepath.Join(o.cache, "floor.out")},
	})
	if err != nil {
		return checkResult{}, err
	}
	ss, cs := got[0], got[1]
	fs, err := compareOutputs(c, outS, outC)
	if err != nil {
		return checkResult{}, err
	}
	return checkResult{c: c, shardgate: summarise(ss), conftest: summarise(cs), floor: summarise(got[2]), findings: fs}, nil
}

func compareOutputs(c planCase, outS, outC string) ([]finding, error) {
	rawS, err := os.ReadFile(outS)
	if err != nil {
		return nil, fmt.Errorf("read shardgate output: %w", err)
	}
	rawC, err := os.ReadFile(outC)
	if err != nil {
		return nil, fmt.Errorf("read conftest output: %w", err)
	}
	allowed, fs, err := shardgateFindings(rawS)
	if err != nil {
		return nil, err
	}
	fc, err := conftestFindings(rawC)
	if err != nil {
		return nil, err
	}
	if allowed != c.allowed {
		return nil, fmt.Errorf("shardgate on %s: allowed=%v, want %v", filepath.Base(c.path), allowed, c.allowed)
	}
	if d := sameFindings(fs, fc); d != "" {
		return nil, fmt.Errorf("the tools disagree on %s: %s", filepath.Base(c.path), d)
	}
	if !c.allowed && len(fs) == 0 {
		return nil, fmt.Errorf("denied case %s has no findings", filepath.Base(c.path))
	}
	return fs, nil
}
