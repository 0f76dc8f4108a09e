package planparse_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// parallelPlans are real terraform and OpenTofu plans and synthesized ones with
// scales, removals and many entries: the inputs the parallel parse must read
// exactly as ParseBytes does.
func parallelPlans(t *testing.T) map[string][]byte {
	t.Helper()
	plans := map[string][]byte{}
	for _, pattern := range []string{"../testdata/terraform/plans/*.json", "testdata/*.json"} {
		files, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, file := range files {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			plans[file] = raw
		}
	}
	require.NotEmpty(t, plans)
	// A removal and an addition of one identity, entries apart, pair into a move
	// (the indexes of additions and removals cross batches); a replace without
	// action_reason late in the plan sends the parse to prior_state's taints.
	const m = "module.s.terraform_data.stream_group"
	filler := func(n int) string {
		var out []string
		for i := range n {
			out = append(out, entry(fmt.Sprintf("aws_s3_bucket.b%d", i), "aws_s3_bucket", change(`["update"]`, `{"b":1}`, `{"b":2}`)))
		}
		return strings.Join(out, ",")
	}
	plans["move across batches"] = planJSON(
		moduleEntry(`module.s["x"].terraform_data.stream_group`, `["create"]`, `null`, moduleInput("audit", "2"), `{"id":true}`),
		moduleEntry(`module.s["a"].terraform_data.stream_group`, `["delete"]`, moduleInput("orders", "4"), `null`, `{}`),
		filler(5),
		moduleEntry(`module.s["b"].terraform_data.stream_group`, `["create"]`, `null`, moduleInput("orders", "4"), `{"id":true}`))
	plans["taint late"] = []byte(`{"format_version":"1.0","resource_changes":[` + filler(5) + `,` +
		moduleEntry(m, `["delete","create"]`, moduleInput("o", "5"), moduleInput("o", "5"), `{}`) +
		`],"prior_state":{"values":{"root_module":{"resources":[{"address":"` + m + `","tainted":true}]}}}}`)
	plans["generated 2000"] = planparsetest.GeneratePlan(2000, 10, 5)
	plans["generated 300, every change"] = planparsetest.GeneratePlan(300, 100, 20)
	return plans
}

// The parallel parse returns what ParseBytes returns on every plan, with one
// entry per batch (the most hand-overs), a few, or one, on 2 to 4 goroutines;
// and on a good plan it does so in parallel, not by parsing again in sequence.
func TestParseBytesParallelAgreesWithParseBytes(t *testing.T) {
	for name, raw := range parallelPlans(t) {
		want, werr := planparse.ParseBytes(raw)
		switch name {
		case "move across batches":
			require.NoError(t, werr)
			require.True(t, slices.ContainsFunc(want.Changes, func(c planparse.Change) bool { return c.Action == planparse.ActionMove }), "no move in %+v", want.Changes)
		case "taint late":
			require.NoError(t, werr)
			require.True(t, slices.ContainsFunc(want.Changes, func(c planparse.Change) bool { return c.Tainted }), "no taint in %+v", want.Changes)
		}
		for _, batch := range []int{1, 4 << 10, 1 << 20} {
			for _, workers := range []int{2, 4} {
				got, err := planparse.ParseParallelBatches(raw, workers, batch, nil)
				if werr != nil {
					require.EqualError(t, err, werr.Error(), "%s", name)
					continue
				}
				require.NoError(t, err, "%s", name)
				require.Equal(t, want, got, "%s, batches of %d bytes, %d workers", name, batch, workers)
				split, err := planparse.SplitParse(raw, workers, batch)
				require.NoError(t, err, "%s: the parallel walk gave up on a good plan", name)
				require.Equal(t, want, split, "%s", name)
			}
		}
	}
}

// Entry boundaries are guessed where an entry's start is most likely
// (`},{"address":`), but only a guess that the entries before it lead to is
// used: text that looks like an entry's start or the resource_changes member
// inside values, names and other members leaves the result as ParseBytes reads
// it.
func TestParseBytesParallelIgnoresLookalikes(t *testing.T) {
	const m = "module.s.terraform_data.stream_group"
	decoy := `{"resource_changes":[{"address":"module.x.terraform_data.stream_group","change":{"actions":["delete"]}}]}`
	e1 := moduleEntry(m, `["update"]`, moduleInput("orders", "4"), moduleInput("orders", "8"), `{"id":true}`)
	e2 := entry("aws_s3_bucket.b", "aws_s3_bucket", change(`["update"]`, `{"tags":{"k":"},{\"address\":\"redisstreamcoordinator_group.g\""}}`, `{"tags":`+decoy+`}`))
	e3 := entry("redisstreamcoordinator_group.g", groupType, change(`["update"]`, orders4, orders8))
	raw := []byte(`{"format_version":"1.2","planned_values":` + decoy + `,"resource_changes":[` + e1 + `,` + e2 + `,` + e3 +
		`],"prior_state":` + decoy + `,"configuration":{"x":"\"resource_changes\":["}}`)
	want, err := planparse.ParseBytes(raw)
	require.NoError(t, err)
	require.Len(t, want.Changes, 2)
	for _, batch := range []int{1, 100, 1 << 20} {
		got, err := planparse.SplitParse(raw, 2, batch)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

// A malformed entry in a later batch, or a broken plan anywhere, gives
// ParseBytes's own error, not a partial change set.
func TestParseBytesParallelErrorsAsParseBytes(t *testing.T) {
	good := planparsetest.GeneratePlan(400, 20, 5)
	i := bytes.LastIndex(good, []byte(`"actions":["`))
	require.Positive(t, i)
	for name, raw := range map[string][]byte{
		"unknown action late":  append(slices.Clip(good[:i]), append([]byte(`"actions":["teleport`), good[i+len(`"actions":["no-op`):]...)...),
		"not an object":        bytes.Replace(good, []byte(`"resource_changes":[`), []byte(`"resource_changes":[7,`), 1),
		"cut short":            good[:len(good)*3/4],
		"duplicate member":     append(slices.Clip(good[:len(good)-1]), []byte(`,"resource_changes":[]}`)...),
		"bad UTF-8 in entries": bytes.Replace(good, []byte(`"no-op"`), []byte("\"no-op\xff\""), 1),
	} {
		_, want := planparse.ParseBytes(raw)
		require.Error(t, want, name)
		for _, batch := range []int{1, 1 << 20} {
			cs, err := planparse.ParseParallelBatches(raw, 2, batch, nil)
			require.Nil(t, cs, name)
			require.EqualError(t, err, want.Error(), "%s", name)
		}
	}
}

// spanRecorder is a done that fails on a concurrent call, and the ranges it
// was told.
type spanRecorder struct {
	t      *testing.T
	mu     sync.Mutex
	inside bool
	spans  [][2]int
}

func (r *spanRecorder) done(lo, hi int) {
	if !r.mu.TryLock() || r.inside {
		panic("done called concurrently")
	}
	r.inside = true
	require.Less(r.t, lo, hi)
	r.spans = append(r.spans, [2]int{lo, hi})
	r.inside = false
	r.mu.Unlock()
}

// covered checks that no two ranges overlap and, with gapless, that they
// leave no gap; it returns how many bytes they cover.
func (r *spanRecorder) covered(gapless bool) int {
	slices.SortFunc(r.spans, func(a, b [2]int) int { return a[0] - b[0] })
	at, n := 0, 0
	for _, s := range r.spans {
		if gapless {
			require.Equal(r.t, at, s[0], "a gap or an overlap at %d", at)
		}
		require.GreaterOrEqual(r.t, s[0], at, "[%d, %d) said again", s[0], min(at, s[1]))
		at, n = s[1], n+s[1]-s[0]
	}
	return n
}

// The ranges done reports never overlap, arrive one at a time, and cover the
// plan from its first byte to its last member, so a caller dropping them drops
// each page once and keeps none the parse no longer needs.
func TestParseBytesParallelReportsEachByteOnce(t *testing.T) {
	raw := planparsetest.GeneratePlan(3000, 10, 5)
	for _, batch := range []int{1, 64 << 10} {
		rec := &spanRecorder{t: t}
		_, err := planparse.ParseParallelBatches(raw, 3, batch, rec.done)
		require.NoError(t, err)
		end := len(bytes.TrimRight(raw, " \n")) - 1 // the plan's closing brace
		at := rec.covered(true)
		require.Equal(t, end, at, "covered up to %d of %d", at, end)
		require.Greater(t, len(rec.spans), 10, fmt.Sprintf("batches of %d bytes", batch))
	}
}

// When the parallel parse fails and the plan is parsed again in sequence,
// the ranges said before are not said again: a caller counting each chunk's
// bytes would otherwise drop a chunk the parse still reads, or, its count
// gone past zero, never drop it.
func TestParseBytesParallelFallbackSaysNoRangeTwice(t *testing.T) {
	good := planparsetest.GeneratePlan(3000, 10, 5)
	i := bytes.LastIndex(good, []byte(`"actions":["`))
	require.Positive(t, i)
	bad := append(slices.Clip(good[:i]), append([]byte(`"actions":["teleport`), good[i+len(`"actions":["no-op`):]...)...)
	for _, batch := range []int{1, 64 << 10} {
		rec := &spanRecorder{t: t}
		_, err := planparse.ParseParallelBatches(bad, 3, batch, rec.done)
		require.Error(t, err)
		require.Greater(t, rec.covered(false), i/2, "the parse said the bytes it was done with")
	}
}

// One worker, or input that is no object, takes the sequential parse.
func TestParseBytesParallelFallsBackToSequence(t *testing.T) {
	raw := planparsetest.GeneratePlan(50, 10, 5)
	want, err := planparse.ParseBytes(raw)
	require.NoError(t, err)
	got, err := planparse.ParseBytesParallel(raw, 1, nil)
	require.NoError(t, err)
	require.Equal(t, want, got)
	_, err = planparse.ParseBytesParallel([]byte(`[1]`), 2, nil)
	_, want2 := planparse.ParseBytes([]byte(`[1]`))
	require.EqualError(t, err, want2.Error())
	require.True(t, strings.Contains(err.Error(), "not"), err.Error())
}

// Objects inside an entry that are written exactly like entries (so that the
// guesses of entry starts land on them), one followed by a ']' that looks like
// the array's end, and entry lookalikes after the array: the parallel parse
// reads the plan's entries only, as ParseBytes does, without giving up.
func TestParseBytesParallelIgnoresNestedEntries(t *testing.T) {
	fake := func(addr string) string {
		return entry(addr, groupType, change(`["delete"]`, orders4, `null`))
	}
	// Attribute lists of objects, unescaped: `},{"address":` inside a value.
	nested := `{"rules":[{"a":1},` + fake("redisstreamcoordinator_group.nested1") + `,` + fake("redisstreamcoordinator_group.nested2") +
		`],"tail":[{"b":2},` + fake("redisstreamcoordinator_group.nested3") + `]}`
	var entries []string
	for i := range 30 {
		entries = append(entries,
			entry(fmt.Sprintf("aws_s3_bucket.b%d", i), "aws_s3_bucket", change(`["update"]`, nested, nested)),
			entry(fmt.Sprintf("redisstreamcoordinator_group.g%d", i), groupType, change(`["update"]`, orders4, orders8)))
	}
	after := `[{"x":0},` + fake("redisstreamcoordinator_group.after1") + `,` + fake("redisstreamcoordinator_group.after2") + `]`
	raw := []byte(`{"format_version":"1.2","resource_changes":[` + strings.Join(entries, ",") +
		`],"prior_state":{"values":` + after + `},"configuration":` + after + `}`)
	want, err := planparse.ParseBytes(raw)
	require.NoError(t, err)
	require.Len(t, want.Changes, 30)
	for _, batch := range []int{1, 100, 700, 1 << 20} {
		for _, workers := range []int{2, 3} {
			got, err := planparse.SplitParse(raw, workers, batch)
			require.NoError(t, err, "batches of %d bytes", batch)
			require.Equal(t, want, got, "batches of %d bytes, %d workers", batch, workers)
		}
	}
}
