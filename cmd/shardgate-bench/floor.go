package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// The floor (issue 37): bench/floor.cpp walks a plan's resource_changes reading
// actions and shard counts with simdjson (Debian's libsimdjson-dev), the least
// work that judging a plan takes. The run builds it and times it beside
// `shardgate check` and conftest on every plan.

// buildFloor compiles bench/floor.cpp into the cache, once per source.
func buildFloor(ctx context.Context, o options) (string, error) {
	src := filepath.Join(o.repo, "bench", "floor.cpp")
	b, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("read the floor's source: %w", err)
	}
	sum := sha256.Sum256(b)
	bin := filepath.Join(o.cache, "floor-"+hex.EncodeToString(sum[:])[:12])
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := removeStale(o.cache, "floor-*"); err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "g++", "-O2", "-std=c++17", "-o", bin+".tmp", src, "-lsimdjson")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the simdjson floor (g++ and libsimdjson-dev): %w: %s", err, lastLines(stderr.String(), 5))
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		return "", fmt.Errorf("build the simdjson floor: %w", err)
	}
	return bin, nil
}

func floorWalk(bin string, c planCase) proc {
	return proc{name: bin, args: []string{c.path}}
}

// idle is `shardgate version`: the executable's own peak memory, reading no plan
// (issue 37's memory target is the plan's size on top of it).
type idle struct {
	runs   int
	median int64 // median peak RSS over the runs
	max    int64
}

func measureIdle(ctx context.Context, o options, runs int) (idle, error) {
	var peaks []int64
	for range runs {
		s, err := runOnce(ctx, proc{name: o.shardgate, args: []string{"version"}}, io.Discard)
		if err != nil {
			return idle{}, err
		}
		if s.exit != 0 {
			return idle{}, fmt.Errorf("shardgate version exited %d", s.exit)
		}
		peaks = append(peaks, s.maxRSS)
	}
	slices.Sort(peaks)
	return idle{runs: runs, median: peaks[len(peaks)/2], max: peaks[len(peaks)-1]}, nil
}

// merge is the idle figures of two measurements (the run's start and end).
func (a idle) merge(b idle) idle {
	return idle{runs: a.runs + b.runs, median: (a.median + b.median) / 2, max: max(a.max, b.max)}
}
