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

// soloHeavyInstances are the bench's solo-heavy instances
// (cmd/shardgate-bench/solo.go): every instance a stream of its own, one in ten
// scaled with the heavy deltas, 1% removed.
func soloHeavyInstances(n int) []planparsetest.Instance {
	ins := planparsetest.Instances(n, 10, 1)
	for i := range ins {
		in := &ins[i]
		in.StreamPrefix = fmt.Sprintf("s%06d", i)
		in.ConsumerGroup = "group"
		in.Key = in.StreamPrefix + "/" + in.ConsumerGroup
		in.ShardsBefore = 4 + 2*(i%4)
		in.ShardsAfter = in.ShardsBefore
		if !in.Removed && i%10 == 3 {
			switch before := in.ShardsBefore; (i / 10) % 4 {
			case 0:
				in.ShardsAfter = before + 2
			case 1:
				in.ShardsAfter = before - 2
			case 2:
				in.ShardsAfter = before + 6
			default:
				in.ShardsAfter = before * 3
			}
		}
	}
	return ins
}

// BenchmarkCheckSolo is BenchmarkCheck on the solo-heavy shape (one stream per
// instance, issue 37).
func BenchmarkCheckSolo(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			raw := planparsetest.Render(soloHeavyInstances(n))
			path := filepath.Join(b.TempDir(), "plan.json")
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if code := runCheck(context.Background(), []string{"--plan", path, "--format", "json"}, io.Discard, io.Discard); code != exitDenied {
					b.Fatalf("exit %d, want %d", code, exitDenied)
				}
			}
		})
	}
}
