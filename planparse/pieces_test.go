package planparse

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// A worker's guess of where resource_changes starts that is wrong (a member of
// that name inside planned_values) is dropped once the walk finds the real one:
// the parallel parse reads the plan's entries, as ParseBytes does, without
// giving up.
func TestSplitDropsAWrongGuess(t *testing.T) {
	entry := func(addr, actions string) string {
		return `{"address":"` + addr + `","mode":"managed","type":"redisstreamcoordinator_group","name":"g","change":{"actions":` + actions +
			`,"before":{"stream_prefix":"o","consumer_group":"b","shard_count":4},"after":{"stream_prefix":"o","consumer_group":"b","shard_count":8},` +
			`"after_unknown":{},"before_sensitive":{},"after_sensitive":{}}}`
	}
	decoy := `{"resource_changes":[` + entry("redisstreamcoordinator_group.decoy", `["delete"]`) + `]}`
	raw := []byte(`{"format_version":"1.2","planned_values":` + decoy + `,"resource_changes":[` +
		entry("redisstreamcoordinator_group.a", `["update"]`) + `,` + entry("redisstreamcoordinator_group.b", `["update"]`) + `]}`)
	want, err := ParseBytes(raw)
	require.NoError(t, err)
	require.Len(t, want.Changes, 2)
	guess := guessArray(raw)
	require.Less(t, guess, bytes.LastIndex(raw, []byte(`"resource_changes":[`)), "the guess is the decoy")
	for _, batch := range []int{1, 1 << 20} {
		s := newSplit(func(int, int) {}, batch)
		s.offer(s.cut(raw, guess)) // the worker was quicker than the walk
		got, err := splitParse(raw, skipSpace(raw, 0), 2, s)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

// Once the walk is over (an error before resource_changes, a plan without it,
// or the chain found), the pieces a worker cut at its guess are no use: the
// workers stop taking them instead of reading the whole array for nothing.
func TestSplitEndedLeavesTheGuessedPieces(t *testing.T) {
	raw := planparsetest.GeneratePlan(50, 10, 1)
	s := newSplit(func(int, int) {}, 1)
	pieces := s.cut(raw, guessArray(raw))
	require.Greater(t, len(pieces), 10)
	s.offer(pieces)
	s.endWalk()
	s.work(raw, false) // returns: nothing left to read
	for _, pc := range pieces {
		select {
		case <-pc.read:
			t.Fatalf("piece at %d read after the walk ended", pc.at)
		default:
		}
	}
}

// The worker looking for resource_changes reads everything before it at once,
// and says so (Hints.ReadAhead), once, so that a mapped file's pages of
// planned_values need not wait for the walk; the parse is ParseBytes's.
func TestParseSaysWhatTheGuessReadAhead(t *testing.T) {
	raw := planparsetest.GeneratePlan(3000, 10, 5)
	want, err := ParseBytes(raw)
	require.NoError(t, err)
	var ahead [][2]int
	got, err := ParseBytesParallelHints(raw, 2, Hints{ReadAhead: func(lo, hi int) { ahead = append(ahead, [2]int{lo, hi}) }})
	require.NoError(t, err)
	require.Equal(t, want, got)
	array := bytes.Index(raw, []byte(`"resource_changes":[`)) + len(`"resource_changes":`)
	require.Equal(t, [][2]int{{0, array}}, ahead)
	require.Greater(t, array, len(raw)/5, "planned_values comes first")
}
