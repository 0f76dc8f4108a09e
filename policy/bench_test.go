package policy

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// benchSizes are the instance counts of the generated plans: 10% of the prefixes
// scaled, 1% of the instances removed.
var benchSizes = []int{100, 1000, 10000, 50000}

// BenchmarkPipeline measures what one plan costs the service: parse the plan JSON,
// extract the change set, evaluate every rule.
func BenchmarkPipeline(b *testing.B) {
	e := benchEngine(b)
	for _, n := range benchSizes {
		plan := planparsetest.GeneratePlan(n, 10, 1)
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			cs, err := planparse.ParseBytes(plan)
			if err != nil {
				b.Fatal(err)
			}
			req := benchRequest(cs)
			op := func() {
				cs, err := planparse.ParseBytes(plan)
				if err != nil {
					b.Fatal(err)
				}
				req.ChangeSet = cs
				benchEvaluate(b, e, req)
			}
			peak := peakHeapMB(op)
			b.ReportAllocs()
			b.SetBytes(int64(len(plan)))
			b.ResetTimer()
			cpu := processCPU()
			for b.Loop() {
				op()
			}
			reportCPU(b, cpu)
			b.ReportMetric(peak, "peak-heap-MB")
		})
	}
}

// BenchmarkEvaluate measures the policy evaluation alone, on a parsed change set.
func BenchmarkEvaluate(b *testing.B) {
	e := benchEngine(b)
	for _, n := range benchSizes {
		cs, err := planparse.ParseBytes(planparsetest.GeneratePlan(n, 10, 1))
		if err != nil {
			b.Fatal(err)
		}
		req := benchRequest(cs)
		req.ChangeSet = cs
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			peak := peakHeapMB(func() { benchEvaluate(b, e, req) })
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for b.Loop() {
				benchEvaluate(b, e, req)
			}
			reportCPU(b, cpu)
			b.ReportMetric(peak, "peak-heap-MB")
		})
	}
}

// BenchmarkEvaluateDenied measures the evaluation of a plan that many rules deny:
// 10% of the prefixes scaled and 1% of the instances removed, with live state
// but no attestation, so every scaled stream is a quiesce_attestation violation
// and every removal a no_destroy one. Denied plans are where a rule that
// rescans the changes per finding shows.
func BenchmarkEvaluateDenied(b *testing.B) {
	e := benchEngine(b)
	for _, n := range benchSizes {
		cs, err := planparse.ParseBytes(planparsetest.GeneratePlan(n, 10, 1))
		if err != nil {
			b.Fatal(err)
		}
		req := benchRequest(cs)
		req.ChangeSet, req.Attestations = cs, nil
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			op := func() {
				d, err := e.Evaluate(context.Background(), req)
				if err != nil || d.Allowed {
					b.Fatalf("want a denial, got allowed=%v err=%v", d.Allowed, err)
				}
			}
			peak := peakHeapMB(op)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for b.Loop() {
				op()
			}
			reportCPU(b, cpu)
			b.ReportMetric(peak, "peak-heap-MB")
		})
	}
}

func benchEngine(b *testing.B) *Engine {
	b.Helper()
	e, err := New()
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// benchRequest is what the service would send for the plan: live state for every
// changed stream (at the plan's before count) and a fresh attestation per scaled one.
func benchRequest(cs *planparse.ChangeSet) Request {
	req := Request{ChangeSet: cs, Coordinator: Coordinator{Consulted: true, Reachable: true}, Live: map[string]LiveStream{}, Now: now}
	for _, c := range cs.Changes {
		if c.Action == planparse.ActionNoop || c.ShardsBefore == nil {
			continue
		}
		key := streamOf(&c)
		s := req.Live[key]
		s.Coordinator, s.StreamPrefix = c.Coordinator, c.StreamPrefix
		s.Groups = append(s.Groups, LiveGroup{ConsumerGroup: c.ConsumerGroup, ShardCount: *c.ShardsBefore, State: "STABLE", LiveMembers: 3})
		req.Live[key] = s
		if c.Action == planparse.ActionScale && len(s.Groups) == 1 {
			req.Attestations = append(req.Attestations, attestation(c.StreamPrefix, now.Add(time.Hour)))
		}
	}
	return req
}

func benchEvaluate(b *testing.B, e *Engine, req Request) {
	d, err := e.Evaluate(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	// Only the removed instances are denied: the scales are small and attested.
	for _, v := range d.Violations {
		if v.Rule != RuleNoDestroy {
			b.Fatalf("unexpected violation %s: %s", v.Rule, v.Message)
		}
	}
}

// reportCPU reports the process CPU time per op since start: on a machine shared
// with other work, wall time per op mostly measures the others.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// peakHeapMB runs op once and returns how far the live heap rose above its level
// after a GC, sampled every millisecond.
func peakHeapMB(op func()) float64 {
	runtime.GC()
	base := heapBytes()
	var mu sync.Mutex
	peak := base
	record := func() {
		h := heapBytes()
		mu.Lock()
		peak = max(peak, h)
		mu.Unlock()
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				record()
			}
		}
	})
	op()
	record()
	close(done)
	wg.Wait()
	return float64(peak-base) / (1 << 20)
}

// heapBytes is the heap occupied by objects, live or not yet swept (HeapAlloc),
// read without stopping the world.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
