package main

import (
	"os"
	"runtime/debug"
)

// GC settings of a check run. A check is a short process whose heap only grows:
// the plan's changes, then the policy input, then the report. At Go's default
// (GOGC=100) the collector runs about eight times on a 50,000-instance plan,
// each time marking all that is live, a quarter of the run's CPU. checkGCPercent
// lets the heap grow to five times what is live before the next collection, and
// a memory limit of half the plan's size (at least checkMinMemoryLimit) brings
// the collector back early when that would take the heap past it. The budget
// (docs/performance.md) is a peak RSS of the plan's size, and the heap is not
// all of it: the binary's mapped pages (~20-36 MiB), the runtime, the part of the
// plan being read. What a large plan keeps live stays under the limit (at 50,000
// instances, a 147 MB plan: ~32 MB after the parse, at most ~56 MB while judging
// and reporting), so the collector runs five to eight times, each marking little.
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
			limit = max(limit, st.Size()/2)
		}
	}
	percent := debug.SetGCPercent(checkGCPercent)
	previous := debug.SetMemoryLimit(limit)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(previous)
	}
}
