package policy

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// soloInstances are the bench's one-stream-per-instance instances
// (cmd/shardgate-bench/solo.go): every instance a stream of its own, one in ten
// scaled (with the heavy deltas in the "heavy" case), 1% removed but in the
// "allowed" case.
func soloInstances(n int, base string) []planparsetest.Instance {
	removed, heavy := 1.0, base == "heavy"
	if base == "allowed" {
		removed = 0
	}
	ins := planparsetest.Instances(n, 10, removed)
	for i := range ins {
		in := &ins[i]
		in.StreamPrefix = fmt.Sprintf("s%06d", i)
		in.ConsumerGroup = "group"
		in.Key = in.StreamPrefix + "/" + in.ConsumerGroup
		in.ShardsBefore = 4 + 2*(i%4)
		in.ShardsAfter = in.ShardsBefore
		if !in.Removed && i%10 == 3 {
			in.ShardsAfter = in.ShardsBefore + 2
			if heavy {
				in.ShardsAfter = []int{in.ShardsBefore + 2, in.ShardsBefore - 2, in.ShardsBefore + 6, in.ShardsBefore * 3}[(i/10)%4]
			}
		}
	}
	return ins
}

// checkRequest is what `shardgate check` asks for a plan: no coordinator, no
// attestation.
func checkRequest(ins []planparsetest.Instance) Request {
	return Request{ChangeSet: instancesChangeSet(ins), Now: now}
}

// BenchmarkEvaluateSolo is the evaluation `shardgate check` runs on the
// solo-heavy plan (issue 37): ten times the streams of the grouped shapes.
func BenchmarkEvaluateSolo(b *testing.B) {
	e := benchEngine(b)
	for _, n := range []int{10000} {
		req := checkRequest(soloInstances(n, "heavy"))
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Evaluate(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuildInputSolo is the policy input alone on the same plan.
func BenchmarkBuildInputSolo(b *testing.B) {
	req := checkRequest(soloInstances(10000, "heavy"))
	j := judge(req)
	b.ReportAllocs()
	for b.Loop() {
		buildInput(req, j, false)
	}
}
