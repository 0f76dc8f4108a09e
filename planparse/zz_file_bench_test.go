package planparse_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/shardgate/shardgate/planparse"
)

// temporary: not committed
func BenchmarkZZFile(b *testing.B) {
	for _, f := range []string{"/work/h38parse/.bench/sh10k.json", "/work/h38parse/.bench/d10k.json", "/tmp/h38parse/sh50k.json"} {
		plan, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f[len(f)-10:]+"/par", func(b *testing.B) {
			b.SetBytes(int64(len(plan)))
			cpu := processCPU()
			for b.Loop() {
				if _, err := planparse.ParseBytesParallel(plan, runtime.GOMAXPROCS(0), nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
		b.Run(f[len(f)-10:]+"/seq", func(b *testing.B) {
			b.SetBytes(int64(len(plan)))
			cpu := processCPU()
			for b.Loop() {
				if _, err := planparse.ParseBytes(plan); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
