package applyqueue

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Jobs of one Terraform state never run at once and keep merge order, with
// or without streams; other states and streams are not held up by them.
func TestApplyQueueStateLock(t *testing.T) {
	ctx := context.Background()
	q, _ := newApplyTestQueue(t, "p1")
	enqueue := func(project, state string, streams ...string) *Job {
		t.Helper()
		job := &Job{Ref: applyTestRef, Project: project, StateKey: state, Streams: streams}
		require.NoError(t, q.Enqueue(ctx, job))
		return job
	}
	alarms1 := enqueue("alarms-1", "acme/infra:alarms@default")         // no streams: the state lock alone
	streams1 := enqueue("streams-1", "acme/infra:streams@default", "a") // a stream and its state
	alarms2 := enqueue("alarms-2", "acme/infra:alarms@default")
	streams2 := enqueue("streams-2", "acme/infra:streams@default", "b") // a free stream, a busy state
	other := enqueue("other", "acme/infra:other@default", "c")

	runnable := func() []string {
		t.Helper()
		jobs, err := q.Runnable(ctx)
		require.NoError(t, err)
		return applyProjects(jobs)
	}
	require.Equal(t, []string{"alarms-1", "streams-1", "other"}, runnable())
	_, err := q.Acquire(ctx, alarms2.Seq)
	require.ErrorIs(t, err, ErrNotRunnable, "the second apply of a state waits for the first")
	_, err = q.Acquire(ctx, streams2.Seq)
	require.ErrorIs(t, err, ErrNotRunnable, "a free stream does not let a job past its busy state")

	bs, err := q.Blockers(ctx, streams2.Seq)
	require.NoError(t, err)
	require.Len(t, bs, 1)
	require.Equal(t, "", bs[0].Stream, "waiting on the state, not a stream")
	require.Equal(t, streams1.Seq, bs[0].Seq)

	for _, j := range []*Job{alarms1, streams1} {
		_, err := q.Acquire(ctx, j.Seq)
		require.NoError(t, err)
		require.NoError(t, q.Finish(ctx, j.Seq, Applied, ""))
	}
	require.Equal(t, []string{"alarms-2", "streams-2", "other"}, runnable())
	_, err = q.Acquire(ctx, other.Seq)
	require.NoError(t, err)
	err = q.Update(ctx, other.Seq, func(j *Job) error { j.StateKey = "elsewhere"; return nil })
	require.ErrorContains(t, err, "state of a running job cannot change")
}
