package planparse_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/shardgate/shardgate/planparse"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// A change set is held through the whole judgement (policy input, report), so
// its slices must not keep the spare capacity of their growth: on a 50,000
// instance plan that was more than half of the parse's live heap.
func TestChangeSetHoldsNoSpareCapacity(t *testing.T) {
	plan := planparsetest.Render(planparsetest.Instances(3000, 10, 1))
	for name, parse := range map[string]func([]byte) (*planparse.ChangeSet, error){
		"ParseBytes": planparse.ParseBytes,
		"Parse":      func(b []byte) (*planparse.ChangeSet, error) { return planparse.Parse(bytes.NewReader(b)) },
	} {
		cs, err := parse(plan)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs.Changes) != 3000 || len(cs.Desired) == 0 {
			t.Fatalf("%s: %d changes, %d desired", name, len(cs.Changes), len(cs.Desired))
		}
		if cap(cs.Changes) != len(cs.Changes) || cap(cs.Desired) != len(cs.Desired) || cap(cs.Resources) != len(cs.Resources) {
			t.Errorf("%s: changes %d/%d, desired %d/%d, resources %d/%d (len/cap)", name,
				len(cs.Changes), cap(cs.Changes), len(cs.Desired), cap(cs.Desired), len(cs.Resources), cap(cs.Resources))
		}
	}
}

// The parse's allocations bound its peak heap in a check run, where the
// collector seldom runs (cmd/shardgate's check_gc.go): the changes are collected
// in chunks and copied once, where a doubling slice allocated about four times
// their size. Budget: 1,200 bytes per instance of the benchmark's denied shape
// (10% scaled, 1% removed), 328 of them the Change itself and 88 its Desired.
func TestParseAllocatesLittlePerInstance(t *testing.T) {
	const n = 20000
	plan := planparsetest.Render(planparsetest.Instances(n, 10, 1))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cs, err := planparse.ParseBytes(plan)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per instance, %d changes", per, len(cs.Changes))
	if per > 1200 {
		t.Errorf("the parse allocates %d bytes per instance, budget 1200", per)
	}
}
