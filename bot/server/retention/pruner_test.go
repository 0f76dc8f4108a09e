package retention

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// The pruner deletes, on its schedule and by its clock, the apply jobs and
// webhook jobs that finished more than the retention ago, and nothing else.
func TestPrunerPrunesFinishedJobsOnItsSchedule(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "store.db"), store.WithoutSync(), store.WithClock(clock.Now))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	q := applyqueue.New(st, "p1", time.Minute, clock.Now)
	ref := pullreq.Ref{Installation: 1, Owner: "acme", Repo: "infra", Number: 7}

	done := &applyqueue.Job{Ref: ref, Project: "done", Streams: []string{"a"}, MergeSHA: "m1"}
	require.NoError(t, q.Enqueue(ctx, done))
	_, err = q.Acquire(ctx, done.Seq)
	require.NoError(t, err)
	require.NoError(t, q.Finish(ctx, done.Seq, applyqueue.Applied, ""))
	waiting := &applyqueue.Job{Ref: ref, Project: "waiting", Streams: []string{"b"}}
	require.NoError(t, q.Enqueue(ctx, waiting))
	finished := &store.Job{DeliveryID: "finished", Kind: webhook.JobKindEvent, Event: "pull_request", Payload: []byte(`{}`)}
	queued := &store.Job{DeliveryID: "queued", Kind: webhook.JobKindEvent, Event: "pull_request", Payload: []byte(`{}`)}
	require.NoError(t, st.Enqueue(ctx, finished, 0))
	require.NoError(t, st.Enqueue(ctx, queued, 0))
	job, err := st.Claim(ctx, "w")
	require.NoError(t, err)
	require.Equal(t, finished.ID, job.ID)
	require.NoError(t, st.Complete(ctx, job.ID, "w", nil))

	p := New(q, st, 10*24*time.Hour, clock.Now, logctx.Logger(ctx))
	p.Every = time.Millisecond
	p.Start(ctx)
	t.Cleanup(p.Close)
	passes := func(n int64) { // waits for n more passes
		t.Helper()
		from := p.passes.Load()
		require.Eventually(t, func() bool { return p.passes.Load() >= from+n }, 10*time.Second, time.Millisecond)
	}
	clock.Advance(24 * time.Hour)
	passes(3)
	all, err := q.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"done", "waiting"}, projects(all), "kept within the retention")
	_, err = st.GetJob(ctx, finished.ID)
	require.NoError(t, err, "the finished webhook job is kept within the retention")

	clock.Advance(9*24*time.Hour + time.Minute)
	passes(2)
	all, err = q.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"waiting"}, projects(all), "the finished apply job is pruned, the waiting one kept")
	require.Equal(t, waiting.Seq, all[0].Seq)
	forPR, err := q.ListForPR(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, []string{"waiting"}, projects(forPR))
	again := &applyqueue.Job{Ref: ref, Project: "done", Streams: []string{"a"}, MergeSHA: "m1"}
	require.NoError(t, q.Enqueue(ctx, again), "its merge record goes with it: the merge may be enqueued again")
	_, err = st.GetJob(ctx, finished.ID)
	require.True(t, errors.Is(err, store.ErrNotFound), "the finished webhook job is pruned")
	j, err := st.GetJob(ctx, queued.ID)
	require.NoError(t, err)
	require.Equal(t, store.JobQueued, j.State, "the queued webhook job is kept")
}

func projects(jobs []*applyqueue.Job) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, j.Project)
	}
	return out
}
