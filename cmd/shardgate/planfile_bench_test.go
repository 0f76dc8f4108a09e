package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// benchPlan writes the benchmark's denied plan of n instances (cmd/shardgate-bench/plans.go)
// to a temporary file.
func benchPlan(b *testing.B, n int) (string, int64) {
	b.Helper()
	raw := planparsetest.Render(planparsetest.Instances(n, 10, 1))
	path := filepath.Join(b.TempDir(), "plan.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	return path, int64(len(raw))
}

// BenchmarkReadPlan is readPlan on a file: mapped, parsed, its pages dropped.
func BenchmarkReadPlan(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			path, size := benchPlan(b, n)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := readPlan(path, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheck is `shardgate check --format json` in process, the policy
// compile included: what the whole-process benchmark (cmd/shardgate-bench/) times but the
// process start.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			path, size := benchPlan(b, n)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if code := runCheck(context.Background(), []string{"--plan", path, "--format", "json"}, io.Discard, io.Discard); code != exitDenied {
					b.Fatalf("exit %d, want %d", code, exitDenied)
				}
			}
		})
	}
}
