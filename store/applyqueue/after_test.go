package applyqueue

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// finishApply takes the job and finishes it as state.
func finishApply(t *testing.T, q *Queue, seq string, state State, reason string) {
	t.Helper()
	ctx := context.Background()
	_, err := q.Acquire(ctx, seq)
	require.NoError(t, err)
	require.NoError(t, q.Finish(ctx, seq, state, reason))
}

// A merge changing network and infra (infra depends on network): network
// runs first; infra only after network was applied. A failed network leaves
// infra waiting, saying so, until network's retry is applied. Jobs share no
// stream or state: only the dependency orders them.
func TestApplyAfterItsDependencies(t *testing.T) {
	ctx := context.Background()
	q, _ := newApplyTestQueue(t, "p1")
	network := &Job{Ref: applyTestRef, Project: "network", StateKey: "network", MergeSHA: "m1"}
	infra := &Job{Ref: applyTestRef, Project: "infra", StateKey: "infra", MergeSHA: "m1", After: []string{"network", "iam"}}
	other := &Job{Ref: applyTestRef, Project: "infra", StateKey: "infra-other", MergeSHA: "m2", After: []string{"network"}}
	for _, j := range []*Job{network, infra, other} {
		require.NoError(t, q.Enqueue(ctx, j))
	}
	runnable := func() []string {
		jobs, err := q.Runnable(ctx)
		require.NoError(t, err)
		return applyProjects(jobs)
	}
	// iam has no job in the merge: it holds nothing; m2 has no network job.
	require.Equal(t, []string{"network", "infra"}, runnable(), "infra of m1 waits; infra of m2 does not")
	blockers, err := q.Blockers(ctx, infra.Seq)
	require.NoError(t, err)
	require.Equal(t, []Blocker{{Seq: network.Seq, Ref: applyTestRef, Project: "network", State: Queued, DependsOn: true}}, blockers)

	finishApply(t, q, network.Seq, Failed, "terraform apply failed")
	require.Equal(t, []string{"infra"}, runnable(), "a failed dependency leaves its dependent waiting")
	blockers, err = q.Blockers(ctx, infra.Seq)
	require.NoError(t, err)
	require.Len(t, blockers, 1)
	require.Equal(t, Failed, blockers[0].State)
	require.Equal(t, "terraform apply failed", blockers[0].Reason)

	retry, err := q.Requeue(ctx, network.Seq)
	require.NoError(t, err)
	require.Equal(t, []string{"infra", "network"}, runnable(), "the retry runs (after m2's infra, in queue order); infra of m1 waits for it")
	finishApply(t, q, retry.Seq, Applied, "")
	require.Equal(t, []string{"infra", "infra"}, runnable(), "network applied: infra of m1 may start")
	blockers, err = q.Blockers(ctx, infra.Seq)
	require.NoError(t, err)
	require.Empty(t, blockers)
}
