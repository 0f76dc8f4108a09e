package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Issue 37's targets, as the report prints them: >= 20× conftest, <= 2× the
// floor, peak <= the plan plus the executable's idle peak.
func TestTargetVerdicts(t *testing.T) {
	const mib = 1 << 20
	id := idle{runs: 10, median: 36 * mib, max: 37 * mib}
	r := checkResult{c: planCase{size: 10000, name: soloPrefix + caseHeavy, bytes: 28 * mib, source: "synthesized"},
		shardgate: stats{median: 100 * time.Millisecond, cpu: 150 * time.Millisecond, user: 120 * time.Millisecond, sys: 30 * time.Millisecond, peak: 60 * mib},
		conftest:  stats{median: 2500 * time.Millisecond, peak: 450 * mib},
		floor:     stats{median: 60 * time.Millisecond, cpu: 50 * time.Millisecond, user: 30 * time.Millisecond, sys: 20 * time.Millisecond, peak: 40 * mib}}
	require.Equal(t, ">= 20×: ok; <= 2× floor: ok; peak <= plan + idle (64 MiB): ok", target(r, id, 25, 100.0/60))
	r.shardgate.peak = 65 * mib
	require.Equal(t, ">= 20×: MISSED; <= 2× floor: MISSED; peak <= plan + idle (64 MiB): MISSED", target(r, id, 19.9, 2.1))

	var b bytes.Buffer
	printReport(&b, options{sizes: []int{10000}, runs: map[int]int{10000: 5}}, machine{cores: 2, cpu: "cpu"}, id, []checkResult{r}, nil, nil)
	require.Contains(t, b.String(), "shardgate version (the executable's idle peak, 10 runs at the start and the end): median 36 MiB, max 37 MiB")
	require.Contains(t, b.String(), "| 10,000 | solo-heavy | 29.4 MB, synthesized | 0.100 s / 65 MiB | 2.500 s / 450 MiB | 0.060 s / 40 MiB (CPU 0.030 s user + 0.020 s sys) | 25.0× / 6.9× | 1.67× |")
	require.Contains(t, b.String(), "CPU 10,000 solo-heavy: check 0.150 s (0.120 s user + 0.030 s sys), floor 0.050 s (0.030 s + 0.020 s): check ÷ floor ×3.00\n")
}
