package planparse_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

func BenchmarkParse(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			plan := planparsetest.GeneratePlan(n, 10, 1)
			peak := peakHeapMB(b, plan)
			b.SetBytes(int64(len(plan)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for b.Loop() {
				cs, err := planparse.ParseBytes(plan)
				if err != nil {
					b.Fatal(err)
				}
				if len(cs.Changes) != n {
					b.Fatalf("got %d changes, want %d", len(cs.Changes), n)
				}
			}
			// On a machine shared with other work, wall time per op mostly measures
			// the others; the process's CPU time (GC included) says more.
			b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			b.ReportMetric(peak, "peak-heap-MB")
		})
	}
}

// BenchmarkParseParallel is BenchmarkParse on the parallel parse `shardgate
// check` uses (ParseBytesParallel), its entries read on every core.
func BenchmarkParseParallel(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			plan := planparsetest.GeneratePlan(n, 10, 1)
			b.SetBytes(int64(len(plan)))
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				cs, err := planparse.ParseBytesParallel(plan, runtime.GOMAXPROCS(0), nil)
				if err != nil {
					b.Fatal(err)
				}
				if len(cs.Changes) != n {
					b.Fatalf("got %d changes, want %d", len(cs.Changes), n)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// peakHeapMB parses plan once while sampling the live heap every millisecond and
// returns the highest sample above the heap left after a GC (the plan itself).
func peakHeapMB(b *testing.B, plan []byte) float64 {
	b.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	_, err := planparse.ParseBytes(plan)
	close(stop)
	wg.Wait()
	require.NoError(b, err)
	if peak.Load() < base {
		return 0
	}
	return float64(peak.Load()-base) / (1 << 20)
}
