package policy

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// Judging a change set that no live state or effect alters holds no second copy
// of its changes: on a 50,000-instance plan that copy was 16 MB of the check's
// peak heap. What judging does alter is copied, and the request's change set is
// never written.
func TestJudgeCopiesOnlyWhatItChanges(t *testing.T) {
	cs, err := planparse.ParseBytes(planparsetest.Render(planparsetest.Instances(2000, 10, 1)))
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(3, func() { judge(Request{ChangeSet: cs}) })
	require.LessOrEqual(t, allocs, 2.0, "judging without live state allocates per change")
	require.Equal(t, &cs.Changes[0], &judge(Request{ChangeSet: cs}).changes[0])

	// A live count read changes the judged change, not the plan's.
	c := cs.Changes[0]
	live := map[string]LiveStream{c.Stream: {Coordinator: c.Coordinator, StreamPrefix: c.StreamPrefix, Groups: []LiveGroup{{ConsumerGroup: c.ConsumerGroup, ShardCount: 99}}}}
	before := cs.Changes[0].ShardsBefore
	j := judge(Request{ChangeSet: cs, Live: live})
	require.Equal(t, 99, *j.changes[0].ShardsBefore)
	require.Same(t, before, cs.Changes[0].ShardsBefore)
	require.NotSame(t, &cs.Changes[0], &j.changes[0])
	require.Equal(t, cs.Changes[1:], j.changes[1:])
}
