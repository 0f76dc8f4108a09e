package apply

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/store/records"
)

// The guard of a merge commit that is a judged merge group's head: the group
// must have been allowed, and the commit's plan of the project must do what
// the group's did, a part the pull requests ahead in the group applied
// counting as done. A merge commit no group was judged on is not compared.
func TestGroupGuard(t *testing.T) {
	ctx := context.Background()
	w := newApplyWorld(t, 2, 4)
	mine := w.run.reviewed.ChangeSet.Changes[0] // billing 2 → 4
	ledger := func(action planparse.Action, before, after int) planparse.Change {
		return planparse.Change{Action: action, StreamPrefix: "payments", ConsumerGroup: "ledger", Coordinator: mine.Coordinator,
			Stream: planparse.StreamKey(mine.Coordinator, "payments"), ShardsBefore: intp(before), ShardsAfter: intp(after)}
	}
	current := &planparse.ChangeSet{Changes: []planparse.Change{mine, ledger(planparse.ActionNoop, 3, 3)}}
	_, ok := w.run.groupGuard(ctx, current)
	require.True(t, ok, "no group was judged on the merge commit")

	judged := func(allowed bool, plans ...*records.Plan) {
		t.Helper()
		require.NoError(t, w.rec.PutGroupJudgement(ctx, seamRef, &records.GroupJudgement{HeadSHA: pushedHead, Allowed: allowed, Plans: plans}))
	}
	// The group judged this scale and the ledger's (2 → 3) of the pull
	// request ahead of it, which applied it already.
	group := &records.Plan{Project: "streams", ChangeSet: &planparse.ChangeSet{Changes: []planparse.Change{mine, ledger(planparse.ActionScale, 2, 3)}}}
	judged(true, group)
	reason, ok := w.run.groupGuard(ctx, current)
	require.True(t, ok, reason)

	moved := &planparse.ChangeSet{Changes: []planparse.Change{mine, ledger(planparse.ActionScale, 5, 3)}}
	reason, ok = w.run.groupGuard(ctx, moved)
	require.False(t, ok)
	require.Contains(t, reason, "not what was judged for the merge group `2222222`")
	require.Contains(t, reason, "payments/ledger")

	judged(true, &records.Plan{Project: "other", ChangeSet: group.ChangeSet})
	reason, ok = w.run.groupGuard(ctx, current)
	require.False(t, ok)
	require.Contains(t, reason, "judged without a plan of project `streams`")

	judged(false, group)
	reason, ok = w.run.groupGuard(ctx, current)
	require.False(t, ok)
	require.Contains(t, reason, "was refused by shardgate")
}
