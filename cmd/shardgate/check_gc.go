package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// GC settings of a check run. A check is a short process whose heap only grows:
// the plan's changes, then the policy input, then the report. At Go's default
// (GOGC=100) the collector runs about eight times on a 50,000-instance plan,
// each time marking all that is live, a quarter of the run's CPU. A check
// therefore turns the proportional collector off and keeps only a memory limit
// (Go's "memory limit only" mode, GOGC=off with GOMEMLIMIT): three quarters of
// the plan's size, at least checkMinMemoryLimit. The heap grows freely up to the
// limit and the collector runs only when it gets near:
//
//   - never or once on a 10,000-instance plan of ten groups per stream (about
//     27 MB allocated in all, near the 32 MiB floor), which saves the cycles
//     GOGC=400 ran there, 15-20% of the wall time of `check` on that plan;
//   - twice on a 10,000-instance plan of one stream per instance, whose heap
//     would reach ~35 MB: the floor was 64 MiB, under which it never collected
//     and peaked at ~70 MiB against the plan's 26 MiB plus the executable's idle
//     37 MiB; under 32 MiB it peaked at ~61 MiB, its CPU no higher (the live
//     heap after a cycle is 9-13 MB; docs/performance.md, issue 37). On huge
//     pages (check_thp_linux.go), which leave less of the heap untouched, that
//     plan peaked 26 MiB over the idle executable, its budget 26.7 MiB; a
//     floor of 30 MiB brought it to 23-24 but cost the grouped 10k plans a
//     cycle, 8-12% of their time. The collection after the parse (below)
//     brings the peak down by 3-5 MiB instead;
//   - two to four times on a 50,000-instance plan (147 MB; limit 105 MiB), whose
//     live heap peaks at ~56 MB while judging and reporting, where half the
//     plan's size (70 MiB) made it run seven or eight times, and the collector
//     competed with the parse's workers for the two cores (docs/performance.md);
//   - at three fifths (79 MiB on a 50,000-instance plan of one stream per
//     instance), the first cycle came in the parse's last steps, as it copies
//     the changes into fresh memory, and took 200-270 ms instead of 20: 0.3-0.45 s
//     of system time (page faults with TLB shootdowns, and the collector's
//     preemption signals, by perf) and a third of the check's wall time. From
//     three quarters it comes after the parse: 0.6 s -> 0.39 s, peak 141 MiB
//     against the plan's 131 MiB plus the idle peak (issue 37, fourth pass).
//
// The budget (docs/performance.md) is a peak RSS of the plan's size, and the
// heap is not all of it: the binary's mapped pages (~25-42 MiB), the runtime,
// the parts of the plan being read. At 50,000 instances the peak is ~118 MiB of
// the plan's 140 MiB. That start is sized from the file, before anything is
// live; after each collection the limit follows the live heap (check_gc_live.go),
// so a plan whose live heap outgrows three quarters of it (one stream per
// instance) no longer makes the collector run without pause.
const checkMinMemoryLimit = 32 << 20

// checkParsedMemoryLimit is the floor once the plan is parsed and collected:
// what is live then is the change set (7 MB at 10,000 instances), and what the
// input, the evaluation and the report allocate on top of it is what is left
// to grow into. The grouped 10k plans end under 28 MiB and never collect
// again; the one-stream-per-instance ones, which allocate ten times the
// per-stream terms, collect once more a little earlier: their peak went from
// 26-28 MiB over the idle executable (over their budget of 26.7 in some runs)
// to 22-24, for ~4-8% of their time (docs/performance.md).
const checkParsedMemoryLimit = 28 << 20

// tuneCheckGC applies those settings for a run on the plan at path ("-" is
// stdin, of unknown size) and returns how to put back the previous ones, and
// what to call once the plan is parsed. GOGC or GOMEMLIMIT in the environment
// win: the settings are then left alone.
//
// The heap up to that limit, which the check will write before it first
// collects, is asked to be backed by huge pages first (adviseHugeHeap), GOGC or
// GOMEMLIMIT set or not.
//
// parsed collects once: the parse leaves more than half of what it allocated
// as garbage (the walk's scratch, the pieces' lists copied into the change
// set; 15-19 MB allocated, 7 MB live at 10,000 instances, 57-69 and 28-29 at
// 50,000), and nothing else runs then, so the cycle marks only the change set,
// in ~2 ms (5 at 50,000), and the input and evaluation reuse what it frees
// instead of new memory: 3-5 MiB less at the peak of a 10,000-instance check,
// 7 at 50,000 (docs/performance.md). The limit's floor is then
// checkParsedMemoryLimit.
func tuneCheckGC(path string) (restore, parsed func()) {
	limit, budget := int64(checkMinMemoryLimit), int64(0)
	if path != "-" {
		if st, err := os.Stat(path); err == nil {
			limit = max(limit, st.Size()*3/4)
			budget = st.Size()
		}
	}
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		adviseHugeHeap(limit)
		return func() {}, func() {}
	}
	// The collector off before the advice's allocation, which would start a
	// cycle of its own, and the limit after it, which it would exceed.
	percent := debug.SetGCPercent(-1)
	adviseHugeHeap(limit)
	previous := debug.SetMemoryLimit(limit)
	live := newLiveLimit(limit, budget)
	live.arm()
	restore = func() {
		live.stop()
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(previous)
	}
	parsed = func() {
		runtime.GC()
		live.restart(max(checkParsedMemoryLimit, budget*3/4))
	}
	return restore, parsed
}
