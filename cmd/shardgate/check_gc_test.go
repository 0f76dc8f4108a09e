package main

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

// A check's memory limit is three quarters of the plan's size (never under
// checkMinMemoryLimit), and the proportional collector is off, so only the
// limit brings a collection: the budget of docs/performance.md is a peak RSS of the
// plan's size, and the process's own mapped binary and runtime take the rest.
func TestCheckMemoryLimitIsThreeQuartersOfThePlan(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOGC")
	os.Unsetenv("GOMEMLIMIT")
	for _, c := range []struct{ size, want int64 }{
		{1 << 20, checkMinMemoryLimit},
		// A 10,000-instance plan of one stream per instance (27.6 MB): its
		// heap reaches ~35 MB, so under 32 MiB the collector runs once or
		// twice and the peak stays within the plan plus the idle peak.
		{27 << 20, 32 << 20},
		{140 << 20, 105 << 20},
		{1 << 30, (1 << 30) * 3 / 4},
	} {
		path := filepath.Join(t.TempDir(), "plan.json")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(c.size); err != nil { // sparse: no bytes written
			t.Fatal(err)
		}
		f.Close()
		before := debug.SetMemoryLimit(-1)
		restore, _ := tuneCheckGC(path)
		got := debug.SetMemoryLimit(-1)
		gcPercent := debug.SetGCPercent(-1) // reads it, leaving it off as it is
		restore()
		if gcPercent != -1 {
			t.Errorf("plan of %d bytes: GOGC %d during the check, want off (-1): only the limit runs the collector", c.size, gcPercent)
		}
		if got != c.want {
			t.Errorf("plan of %d bytes: memory limit %d, want %d", c.size, got, c.want)
		}
		if after := debug.SetMemoryLimit(-1); after != before {
			t.Errorf("restore left the limit at %d, want %d", after, before)
		}
	}
}

// Once the plan is parsed the check collects, so that the input and the
// evaluation reuse the parse's garbage instead of growing the heap, and lowers
// the limit's floor; with GOGC or GOMEMLIMIT set the collector is the user's,
// and nothing is forced or changed.
func TestCheckCollectsOnceParsed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, gogc := range []string{"", "100"} {
		t.Setenv("GOGC", gogc)
		if gogc == "" {
			os.Unsetenv("GOGC")
		}
		before := debug.SetMemoryLimit(-1)
		restore, parsed := tuneCheckGC(path)
		var stats, statsAfter runtime.MemStats
		runtime.ReadMemStats(&stats)
		parsed()
		runtime.ReadMemStats(&statsAfter)
		limit := debug.SetMemoryLimit(-1)
		restore()
		if want := uint32(map[string]int{"": 1, "100": 0}[gogc]); statsAfter.NumForcedGC-stats.NumForcedGC != want {
			t.Errorf("GOGC=%q: %d collections forced once parsed, want %d", gogc, statsAfter.NumForcedGC-stats.NumForcedGC, want)
		}
		// What is left to grow into once parsed: the lower floor, as the
		// live heap of a test process is far under it.
		if want := map[string]int64{"": checkParsedMemoryLimit, "100": before}[gogc]; limit != want {
			t.Errorf("GOGC=%q: memory limit %d once parsed, want %d", gogc, limit, want)
		}
	}
}
