package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// After each collection the limit is twice the live heap, within the start
// (from the plan's size) and the budget (the plan's size); a live heap near the
// budget gets a quarter more than itself, never a limit under what is live.
func TestLiveLimitFollowsTheLiveHeap(t *testing.T) {
	const mib = 1 << 20
	l := newLiveLimit(79*mib, 131*mib) // a 50,000-instance plan of one stream per instance
	for _, c := range []struct{ live, want int64 }{
		{10 * mib, 79 * mib},   // little live: the start holds
		{50 * mib, 100 * mib},  // twice the live heap
		{80 * mib, 131 * mib},  // capped at the budget
		{119 * mib, 148 * mib}, // near the budget: 5/4 of live, never under it (the old limit, 79 MiB, was)
	} {
		if got := l.next(c.live); got/mib != c.want/mib {
			t.Errorf("live %d MiB: limit %d MiB, want %d MiB", c.live/mib, got/mib, c.want/mib)
		}
	}
}

// The re-sizing runs on the process's real collections: a live heap above the
// start raises the limit, and stop leaves the limit alone.
func TestLiveLimitRunsAfterACollection(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	const start = 1 << 20
	l := newLiveLimit(start, 1<<40)
	debug.SetMemoryLimit(start)
	keep := make([]byte, 16<<20) // live across the collections below
	l.arm()
	for range 100 {
		runtime.GC()
		runtime.Gosched()
		l.mu.Lock()
		n := l.cycles
		l.mu.Unlock()
		if n > 0 {
			break
		}
	}
	l.stop()
	runtime.KeepAlive(keep)
	if l.cycles == 0 {
		t.Fatal("no collection was seen")
	}
	if got := debug.SetMemoryLimit(-1); got < 2*int64(len(keep)) {
		t.Errorf("limit %d after a collection with %d bytes live, want at least twice that", got, len(keep))
	}
}
