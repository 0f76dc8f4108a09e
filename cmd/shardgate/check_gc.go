package main

import (
	"math"
	"os"
	"runtime/debug"
)

// GC settings of a check run. A check is a short process whose heap only grows:
// the plan's changes, then the policy input, then the report. At Go's default
// (GOGC=100) the collector runs about eight times on a 50,000-instance plan,
// each time marking all that is live, a quarter of the run's CPU. checkGCPercent
// lets the heap grow to five times what is live before the next collection, and
// a memory limit of the plan's size (at least checkMinMemoryLimit) brings the
// collector back early when that would take the heap past it: the changes of a
// plan hold well under half of its bytes, so the limit leaves room, and the peak
// stays within the budget of docs/performance.md (RSS ≤ 1.5× the plan).
const (
	checkGCPercent      = 400
	checkMinMemoryLimit = 64 << 20
)

// tuneCheckGC applies those settings for a run on the plan at path ("-" is
// stdin, of unknown size) and returns how to put back the previous ones. GOGC or
// GOMEMLIMIT in the environment win: the settings are then left alone.
func tuneCheckGC(path string) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := int64(checkMinMemoryLimit)
	if path != "-" {
		if st, err := os.Stat(path); err == nil {
			limit = max(limit, min(st.Size(), math.MaxInt64/2))
		}
	}
	percent := debug.SetGCPercent(checkGCPercent)
	previous := debug.SetMemoryLimit(limit)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(previous)
	}
}
