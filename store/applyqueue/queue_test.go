package applyqueue

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/store"
)

// openApplyStore opens a Bolt store for queue tests; fsync is off, as these
// tests are about ordering, not durability (the benchmark keeps it on).
func openApplyStore(t *testing.T, path string) *store.Bolt {
	t.Helper()
	st, err := store.OpenBolt(path, store.WithoutSync())
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func newApplyTestQueue(t *testing.T, owner string) (*Queue, *store.Bolt) {
	t.Helper()
	st := openApplyStore(t, filepath.Join(t.TempDir(), "store.db"))
	return New(st, owner, time.Minute, nil), st
}

var applyTestRef = pullreq.Ref{Installation: 1, Owner: "acme", Repo: "infra", Number: 7}

func enqueueApply(t *testing.T, q *Queue, project string, streams ...string) *Job {
	t.Helper()
	job := &Job{Ref: applyTestRef, Project: project, Streams: streams}
	require.NoError(t, q.Enqueue(context.Background(), job))
	return job
}

func applyProjects(jobs []*Job) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, j.Project)
	}
	return out
}

func TestApplyQueueEnqueue(t *testing.T) {
	ctx := context.Background()
	q, _ := newApplyTestQueue(t, "p1")

	job := &Job{Ref: applyTestRef, Project: "orders", Streams: []string{"b", "a", "", "b"}, MergeSHA: "m1",
		State: Applied, Attempt: 5, LeaseOwner: "someone", Reason: "stale", RetryOf: "000000000009"}
	require.NoError(t, q.Enqueue(ctx, job))
	require.Equal(t, "000000000001", job.Seq)
	require.Equal(t, []string{"a", "b"}, job.Streams)
	require.Equal(t, Queued, job.State)
	require.Zero(t, job.Attempt)
	require.Empty(t, job.LeaseOwner)
	require.Empty(t, job.Reason)
	require.Empty(t, job.RetryOf)
	require.False(t, job.CreatedAt.IsZero())

	t.Run("the same merge of the same project is refused", func(t *testing.T) {
		again := &Job{Ref: applyTestRef, Project: "orders", MergeSHA: "m1"}
		err := q.Enqueue(ctx, again)
		require.ErrorIs(t, err, ErrApplyExists)
		require.Empty(t, again.Seq, "a refused job is not filled in")
	})
	t.Run("another project of the same merge is queued after", func(t *testing.T) {
		other := &Job{Ref: applyTestRef, Project: "billing", MergeSHA: "m1"}
		require.NoError(t, q.Enqueue(ctx, other))
		require.Equal(t, "000000000002", other.Seq)
	})
	t.Run("ListForPR keeps one pull request's jobs", func(t *testing.T) {
		otherPR := applyTestRef
		otherPR.Number = 8
		require.NoError(t, q.Enqueue(ctx, &Job{Ref: otherPR, Project: "orders", MergeSHA: "m2"}))
		jobs, err := q.ListForPR(ctx, applyTestRef)
		require.NoError(t, err)
		require.Equal(t, []string{"orders", "billing"}, applyProjects(jobs))
		all, err := q.List(ctx)
		require.NoError(t, err)
		require.Len(t, all, 3)
	})
	t.Run("Get of an unknown seq is not found", func(t *testing.T) {
		_, err := q.Get(ctx, "000000000099")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// applyStep acquires and finishes jobs by project, then checks what is runnable.
type applyStep struct {
	apply, fail, hold []string // finish as applied, finish as failed, acquire and keep running
	want              []string // runnable projects after the step, in order
	notRunnable       []string // Acquire must refuse these
}

func TestApplyQueueRunnable(t *testing.T) {
	type job struct {
		project string
		streams []string
	}
	tests := []struct {
		name  string
		jobs  []job
		steps []applyStep
	}{
		{
			name: "one stream is first in, first out",
			jobs: []job{{"j1", []string{"a"}}, {"j2", []string{"a"}}, {"j3", []string{"a"}}},
			steps: []applyStep{
				{want: []string{"j1"}, notRunnable: []string{"j2", "j3"}},
				{apply: []string{"j1"}, want: []string{"j2"}},
				{apply: []string{"j2"}, want: []string{"j3"}},
				{apply: []string{"j3"}, want: []string{}},
			},
		},
		{
			name:  "disjoint streams and no streams all run at once",
			jobs:  []job{{"j1", []string{"a"}}, {"j2", []string{"b"}}, {"j3", nil}, {"j4", nil}},
			steps: []applyStep{{want: []string{"j1", "j2", "j3", "j4"}}},
		},
		{
			name: "cross pattern: no overtaking, no deadlock",
			jobs: []job{{"j1", []string{"a"}}, {"j2", []string{"b"}}, {"j3", []string{"a", "b"}},
				{"j4", []string{"b", "a"}}, {"j5", []string{"a"}}, {"j6", []string{"c"}}},
			steps: []applyStep{
				{want: []string{"j1", "j2", "j6"}, notRunnable: []string{"j3", "j4", "j5"}},
				{apply: []string{"j2"}, want: []string{"j1", "j6"}, notRunnable: []string{"j3"}},
				{apply: []string{"j1"}, want: []string{"j3", "j6"}, notRunnable: []string{"j4", "j5"}},
				{apply: []string{"j3"}, want: []string{"j4", "j6"}},
				{apply: []string{"j4", "j6"}, want: []string{"j5"}},
			},
		},
		{
			name: "a multi-stream job waits for each stream and holds both",
			jobs: []job{{"j1", []string{"a", "b"}}, {"j2", []string{"a"}}, {"j3", []string{"b"}}, {"j4", []string{"c", "a"}}},
			steps: []applyStep{
				{want: []string{"j1"}},
				{apply: []string{"j1"}, want: []string{"j2", "j3"}, notRunnable: []string{"j4"}},
				{apply: []string{"j2"}, want: []string{"j3", "j4"}},
			},
		},
		{
			name: "a waiting job keeps its place on its other streams",
			jobs: []job{{"j1", []string{"a"}}, {"j2", []string{"a", "b"}}, {"j3", []string{"b"}}, {"j4", []string{"c"}}},
			steps: []applyStep{
				{want: []string{"j1", "j4"}, notRunnable: []string{"j2", "j3"}},
				{apply: []string{"j1"}, want: []string{"j2", "j4"}, notRunnable: []string{"j3"}},
				{apply: []string{"j2"}, want: []string{"j3", "j4"}},
			},
		},
		{
			name: "a running job is not runnable and keeps its streams",
			jobs: []job{{"j1", []string{"a"}}, {"j2", []string{"a"}}, {"j3", nil}},
			steps: []applyStep{
				{hold: []string{"j1", "j3"}, want: []string{}, notRunnable: []string{"j1", "j2", "j3"}},
				{apply: []string{"j1"}, want: []string{"j2"}},
			},
		},
		{
			name: "a failed job frees its streams",
			jobs: []job{{"j1", []string{"a"}}, {"j2", []string{"a"}}},
			steps: []applyStep{
				{fail: []string{"j1"}, want: []string{"j2"}, notRunnable: []string{"j1"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			q, _ := newApplyTestQueue(t, "p1")
			seqs := map[string]string{}
			for _, j := range tt.jobs {
				seqs[j.project] = enqueueApply(t, q, j.project, j.streams...).Seq
			}
			for i, step := range tt.steps {
				for _, p := range step.hold {
					_, err := q.Acquire(ctx, seqs[p])
					require.NoError(t, err, "step %d: acquire %s", i, p)
				}
				for _, p := range append(append([]string{}, step.apply...), step.fail...) {
					if _, err := q.Acquire(ctx, seqs[p]); err != nil {
						require.ErrorIs(t, err, ErrNotRunnable, "step %d: acquire %s", i, p)
					}
				}
				for _, p := range step.apply {
					require.NoError(t, q.Finish(ctx, seqs[p], Applied, ""), "step %d: finish %s", i, p)
				}
				for _, p := range step.fail {
					require.NoError(t, q.Finish(ctx, seqs[p], Failed, "boom"), "step %d: fail %s", i, p)
				}
				got, err := q.Runnable(ctx)
				require.NoError(t, err)
				require.Equal(t, step.want, applyProjects(got), "step %d", i)
				for _, p := range step.notRunnable {
					_, err := q.Acquire(ctx, seqs[p])
					require.ErrorIs(t, err, ErrNotRunnable, "step %d: acquire %s", i, p)
				}
			}
		})
	}
}

func TestApplyQueueBlockers(t *testing.T) {
	ctx := context.Background()
	q, _ := newApplyTestQueue(t, "p1")
	j1 := enqueueApply(t, q, "j1", "a")
	j2 := enqueueApply(t, q, "j2", "b")
	j3 := enqueueApply(t, q, "j3", "a", "b")
	j4 := enqueueApply(t, q, "j4", "a", "c")
	_, err := q.Acquire(ctx, j1.Seq)
	require.NoError(t, err)

	blockers := func(seq string) []string {
		t.Helper()
		bs, err := q.Blockers(ctx, seq)
		require.NoError(t, err)
		out := []string{}
		for _, b := range bs {
			require.Equal(t, applyTestRef, b.Ref)
			out = append(out, b.Stream+"<"+b.Project+"/"+string(b.State)+"/"+b.Seq)
		}
		return out
	}
	require.Equal(t, []string{}, blockers(j1.Seq), "the first job waits for nobody")
	require.Equal(t, []string{"a<j1/queued/" + j1.Seq, "b<j2/queued/" + j2.Seq}, blockers(j3.Seq))
	require.Equal(t, []string{"a<j1/queued/" + j1.Seq}, blockers(j4.Seq), "the front of the line, not the job just ahead")

	require.NoError(t, q.Finish(ctx, j1.Seq, Applied, ""))
	require.Equal(t, []string{"a<j3/queued/" + j3.Seq}, blockers(j4.Seq))
	require.Equal(t, []string{"b<j2/queued/" + j2.Seq}, blockers(j3.Seq))
	require.Equal(t, []string{}, blockers(j1.Seq), "a finished job waits for nobody")

	_, err = q.Blockers(ctx, "000000000099")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestApplyQueuePersistence(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	st, err := store.OpenBolt(path, store.WithoutSync())
	require.NoError(t, err)
	q := New(st, "p1", time.Minute, nil)
	for _, p := range []string{"j1", "j2", "j3"} {
		enqueueApply(t, q, p, "a")
	}
	j4 := enqueueApply(t, q, "j4", "b")
	_, err = q.Acquire(ctx, j4.Seq)
	require.NoError(t, err)
	before, err := q.List(ctx)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	q2 := New(openApplyStore(t, path), "p2", time.Minute, nil)
	after, err := q2.List(ctx)
	require.NoError(t, err)
	require.Equal(t, before, after)
	runnable, err := q2.Runnable(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"j1"}, applyProjects(runnable), "j4 is still leased by p1")

	j5 := enqueueApply(t, q2, "j5", "a")
	require.Equal(t, "000000000005", j5.Seq, "the counter continues after a restart")
}

func TestApplyQueueLeaseRecovery(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	_, st := newApplyTestQueue(t, "unused")
	old := New(st, "old", time.Second, clock.Now)
	fresh := New(st, "new", time.Second, clock.Now)
	job := enqueueApply(t, old, "orders", "a")
	later := enqueueApply(t, old, "billing", "a")

	got, err := old.Acquire(ctx, job.Seq)
	require.NoError(t, err)
	require.Equal(t, 1, got.Attempt)
	require.Equal(t, "old", got.LeaseOwner)
	require.Equal(t, clock.Now().Add(time.Second), got.LeaseUntil)

	notRunnable := func(why string) {
		t.Helper()
		r, err := fresh.Runnable(ctx)
		require.NoError(t, err)
		require.Empty(t, r, why)
		_, err = fresh.Acquire(ctx, job.Seq)
		require.ErrorIs(t, err, ErrNotRunnable, why)
		_, err = fresh.Acquire(ctx, later.Seq)
		require.ErrorIs(t, err, ErrNotRunnable, "the job behind waits on the stream: %s", why)
	}
	notRunnable("a live lease")
	clock.Advance(900 * time.Millisecond)
	require.NoError(t, old.Renew(ctx, job.Seq))
	clock.Advance(900 * time.Millisecond)
	notRunnable("a renewed lease")
	require.ErrorIs(t, fresh.Renew(ctx, job.Seq), ErrNotHolder)
	require.ErrorIs(t, fresh.Finish(ctx, job.Seq, Applied, ""), ErrNotHolder)

	clock.Advance(100 * time.Millisecond) // exactly at LeaseUntil: expired
	r, err := fresh.Runnable(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"orders"}, applyProjects(r))
	got, err = fresh.Acquire(ctx, job.Seq)
	require.NoError(t, err)
	require.Equal(t, 2, got.Attempt)
	require.Equal(t, "new", got.LeaseOwner)

	t.Run("the process that lost the lease can no longer touch the job", func(t *testing.T) {
		require.ErrorIs(t, old.Renew(ctx, job.Seq), ErrNotHolder)
		require.ErrorIs(t, old.Update(ctx, job.Seq, func(j *Job) error { j.Progress = "x"; return nil }), ErrNotHolder)
		require.ErrorIs(t, old.Finish(ctx, job.Seq, Applied, ""), ErrNotHolder)
	})
	require.NoError(t, fresh.Finish(ctx, job.Seq, Applied, ""))
	require.ErrorIs(t, fresh.Finish(ctx, job.Seq, Applied, ""), ErrNotHolder, "finished twice")
	r, err = fresh.Runnable(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"billing"}, applyProjects(r))
}

func TestApplyQueueUpdate(t *testing.T) {
	tests := []struct {
		name    string
		fn      func(*Job) error
		wantErr string
	}{
		{name: "state and progress", fn: func(j *Job) error { j.State, j.Progress = Applying, "terraform apply"; return nil }},
		{name: "streams", fn: func(j *Job) error { j.Streams = append(j.Streams, "z"); return nil }, wantErr: "streams"},
		{name: "seq", fn: func(j *Job) error { j.Seq = "000000000000"; return nil }, wantErr: "place in the order"},
		{name: "lease", fn: func(j *Job) error { j.LeaseUntil = j.LeaseUntil.Add(time.Hour); return nil }, wantErr: "lease"},
		{name: "finishing", fn: func(j *Job) error { j.State = Applied; return nil }, wantErr: "use Finish"},
		{name: "fn error", fn: func(*Job) error { return errors.New("no thanks") }, wantErr: "no thanks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			q, _ := newApplyTestQueue(t, "p1")
			job := enqueueApply(t, q, "orders", "a")
			acquired, err := q.Acquire(ctx, job.Seq)
			require.NoError(t, err)
			err = q.Update(ctx, job.Seq, tt.fn)
			got, gerr := q.Get(ctx, job.Seq)
			require.NoError(t, gerr)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Equal(t, acquired, got, "a refused update changes nothing")
				return
			}
			require.NoError(t, err)
			require.Equal(t, Applying, got.State)
			require.Equal(t, "terraform apply", got.Progress)
			require.Equal(t, acquired.LeaseUntil, got.LeaseUntil)
		})
	}
	t.Run("finish takes only a final state", func(t *testing.T) {
		q, _ := newApplyTestQueue(t, "p1")
		job := enqueueApply(t, q, "orders", "a")
		_, err := q.Acquire(context.Background(), job.Seq)
		require.NoError(t, err)
		require.ErrorContains(t, q.Finish(context.Background(), job.Seq, Converging, ""), "not applied or failed")
	})
}

func TestApplyQueueRequeue(t *testing.T) {
	ctx := context.Background()
	q, st := newApplyTestQueue(t, "p1")
	j1 := enqueueApply(t, q, "j1", "a")
	j2 := enqueueApply(t, q, "j2", "a")
	j3 := enqueueApply(t, q, "j3", "b")
	_, err := q.Acquire(ctx, j1.Seq)
	require.NoError(t, err)
	require.NoError(t, q.Finish(ctx, j1.Seq, Failed, "state lock held"))
	failed, err := q.Get(ctx, j1.Seq)
	require.NoError(t, err)

	_, err = q.Requeue(ctx, j2.Seq)
	require.ErrorIs(t, err, ErrNotFailed)
	_, err = q.Requeue(ctx, "000000000099")
	require.ErrorIs(t, err, store.ErrNotFound)

	retry, err := q.Requeue(ctx, j1.Seq)
	require.NoError(t, err)
	require.Greater(t, retry.Seq, j3.Seq, "a retry goes to the end of the order")
	require.Equal(t, Queued, retry.State)
	require.Empty(t, retry.Reason)
	require.Zero(t, retry.Attempt)
	require.Equal(t, j1.Seq, retry.RetryOf)
	_, err = q.Get(ctx, j1.Seq)
	require.ErrorIs(t, err, store.ErrNotFound, "the failed record is gone")

	all, err := q.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"j2", "j3", "j1"}, applyProjects(all))
	r, err := q.Runnable(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"j2", "j3"}, applyProjects(r), "the retry waits behind j2 on stream a")

	t.Run("a crash between writing the retry and deleting the failed record", func(t *testing.T) {
		raw, err := json.Marshal(failed)
		require.NoError(t, err)
		require.NoError(t, st.Put(ctx, applyBucket, j1.Seq, raw))

		all, err := q.List(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"j2", "j3", "j1"}, applyProjects(all), "the replaced record is hidden")
		again, err := q.Requeue(ctx, j1.Seq)
		require.NoError(t, err)
		require.Equal(t, retry.Seq, again.Seq, "requeued once, not twice")
		_, err = st.Get(ctx, applyBucket, j1.Seq)
		require.ErrorIs(t, err, store.ErrNotFound, "the interrupted delete is finished")
	})
}

func TestApplyQueuePrune(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	_, st := newApplyTestQueue(t, "unused")
	q := New(st, "p1", time.Minute, clock.Now)
	finish := func(j *Job, state State) {
		t.Helper()
		_, err := q.Acquire(ctx, j.Seq)
		require.NoError(t, err)
		require.NoError(t, q.Finish(ctx, j.Seq, state, ""))
	}
	applied := enqueueApply(t, q, "applied-old", "a")
	finish(applied, Applied)
	failed := enqueueApply(t, q, "failed-old", "b")
	finish(failed, Failed)
	stale, err := q.Get(ctx, failed.Seq)
	require.NoError(t, err)
	retried, err := q.Requeue(ctx, failed.Seq)
	require.NoError(t, err)
	raw, err := json.Marshal(stale)
	require.NoError(t, err)
	require.NoError(t, st.Put(ctx, applyBucket, failed.Seq, raw)) // a Requeue cut short
	waiting := enqueueApply(t, q, "waiting", "c")
	clock.Advance(2 * time.Hour)
	recent := enqueueApply(t, q, "applied-recent", "d")
	finish(recent, Applied)

	n, err := q.Prune(ctx, clock.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Equal(t, 2, n, "the old applied job and the replaced record")
	all, err := q.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"failed-old", "waiting", "applied-recent"}, applyProjects(all))
	require.Equal(t, retried.Seq, all[0].Seq, "the retry is queued, not pruned")
	require.Equal(t, waiting.Seq, all[1].Seq)
	next := enqueueApply(t, q, "next", "a")
	require.Equal(t, "000000000006", next.Seq, "Seqs are not reused")
}

func TestApplyQueueLive(t *testing.T) {
	ctx := context.Background()
	q, _ := newApplyTestQueue(t, "p1")
	last, err := q.LastSeq(ctx)
	require.NoError(t, err)
	require.Empty(t, last, "no job yet")
	j1 := enqueueApply(t, q, "j1", "a")
	enqueueApply(t, q, "j2", "a")
	j3 := enqueueApply(t, q, "j3", "b")
	last, err = q.LastSeq(ctx)
	require.NoError(t, err)
	require.Equal(t, j3.Seq, last)
	held, err := q.Acquire(ctx, j1.Seq)
	require.NoError(t, err)
	live, err := q.Live(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"j1", "j2", "j3"}, applyProjects(live))
	require.Equal(t, "p1", live[0].LeaseOwner)
	require.Equal(t, held.Fence, live[0].Fence)
	live[0].Streams[0] = "changed by the caller"

	require.NoError(t, q.Finish(ctx, j1.Seq, Applied, ""))
	live, err = q.Live(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"j2", "j3"}, applyProjects(live), "finished jobs are not live")
	require.Equal(t, []string{"a"}, live[0].Streams)
}
