package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// liveLimit re-sizes a check's soft memory limit from the live heap after every
// collection (issue 37). The limit a check starts with comes from the plan's
// size, since nothing is live yet; but what a plan keeps live depends on its
// shape, not its size: a plan of one stream per instance keeps ten times the
// per-stream terms (desired counts, the policy's streams) of one with ten groups
// per stream, and at 50,000 instances its live heap (~119 MB) sat above three
// fifths of the plan (79 MiB), so every allocation ran the collector: 35 cycles
// and 42% of the CPU. After each cycle the limit becomes
//
//	max(start, min(2 × live, budget))
//
// twice the live heap, as GOGC=100 would aim, but never under the start (so the
// shapes that never collected still do not) and never over the budget, the
// plan's size: the peak-memory target (docs/performance.md) is the plan's size
// on top of the executable's own idle peak. Only when the live heap itself
// nears the budget (a plan heavier than the target allows) does the limit go
// over it, to live × 5/4: slower, never a collector that runs without pause.
type liveLimit struct {
	start, budget int64

	mu      sync.Mutex
	stopped bool
	sample  []metrics.Sample
	cycles  int
}

func newLiveLimit(start, budget int64) *liveLimit {
	return &liveLimit{start: start, budget: max(start, budget),
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
}

// next is the limit after a cycle that left live bytes live.
func (l *liveLimit) next(live int64) int64 {
	limit := min(2*live, l.budget)
	if live > l.budget*9/10 {
		limit = live + live/4
	}
	return max(l.start, limit)
}

// arm asks to be told of the next collection: a finalizer on a fresh object
// runs once a cycle has found it unreachable, and re-arms.
func (l *liveLimit) arm() {
	sentinel := &struct {
		l   *liveLimit // a pointer, so the object is not batched by the tiny allocator
		pad [8]int64
	}{l: l}
	runtime.SetFinalizer(sentinel, func(s *struct {
		l   *liveLimit
		pad [8]int64
	}) {
		s.l.collected()
	})
}

func (l *liveLimit) collected() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.cycles++
	metrics.Read(l.sample)
	if l.sample[0].Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(l.next(int64(l.sample[0].Value.Uint64())))
	}
	l.arm()
}

// restart makes start the limit's floor from now on, and applies it to the
// live heap as a collection would.
func (l *liveLimit) restart(start int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.start = start
	metrics.Read(l.sample)
	if l.sample[0].Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(l.next(int64(l.sample[0].Value.Uint64())))
	}
}

// stop ends the re-sizing; the caller then puts back its own limit.
func (l *liveLimit) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
}
