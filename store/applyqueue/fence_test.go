package applyqueue

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storeopen"
	"github.com/shardgate/shardgate/store/storetest"
)

// sharedStores returns, per store kind, an opener of two handles on one
// store, as two processes would have: the same bbolt store (one process per
// file), or two pools on one PostgreSQL schema.
// testBucket is a bucket of the caller's that PutFenced writes to.
const testBucket = "audit"

func sharedStores() map[string]func(t *testing.T) (store.Store, store.Store) {
	return map[string]func(t *testing.T) (store.Store, store.Store){
		"bolt": func(t *testing.T) (store.Store, store.Store) {
			st := openApplyStore(t, filepath.Join(t.TempDir(), "store.db"))
			return st, st
		},
		"postgres": func(t *testing.T) (store.Store, store.Store) {
			url := storetest.PostgresURL(t)
			return storeopen.PostgresAt(t, url, time.Minute), storeopen.PostgresAt(t, url, time.Minute)
		},
	}
}

// A process that lost its job (paused past the lease, then taken over)
// cannot write to it any more: not its progress, its outcome, its audit
// record nor a renewal; the new holder's token is higher and its writes
// stand.
func TestApplyQueueFencesAnOldHolder(t *testing.T) {
	for name, open := range sharedStores() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			stA, stB := open(t)
			clock := fakeclock.New(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
			a := New(stA, "replica-a", time.Second, clock.Now)
			b := New(stB, "replica-b", time.Second, clock.Now)
			job := enqueueApply(t, a, "orders", "coord|orders")
			held, err := a.Acquire(ctx, job.Seq)
			require.NoError(t, err)
			require.NoError(t, a.Fenced(ctx, job.Seq))
			require.NoError(t, a.PutFenced(ctx, job.Seq, testBucket, "a-ok", []byte("{}")))

			clock.Advance(2 * time.Second) // A paused past its lease
			require.ErrorIs(t, a.Fenced(ctx, job.Seq), ErrNotHolder, "by its own clock A knows it may have lost the job")
			took, err := b.Acquire(ctx, job.Seq)
			require.NoError(t, err)
			require.Greater(t, took.Fence, held.Fence, "each acquisition has a higher token")
			require.Equal(t, 2, took.Attempt)

			// A wakes up.
			require.ErrorIs(t, a.Update(ctx, job.Seq, func(j *Job) error { j.Progress = "late"; return nil }), ErrNotHolder)
			require.ErrorIs(t, a.PutFenced(ctx, job.Seq, testBucket, "a-late", []byte("{}")), ErrNotHolder)
			require.ErrorIs(t, a.Finish(ctx, job.Seq, Failed, "late"), ErrNotHolder)
			require.ErrorIs(t, a.Renew(ctx, job.Seq), ErrNotHolder)
			require.ErrorIs(t, a.Fenced(ctx, job.Seq), ErrNotHolder)
			_, err = stA.Get(ctx, testBucket, "a-late")
			require.ErrorIs(t, err, store.ErrNotFound, "the late audit record was not written")

			require.NoError(t, b.Update(ctx, job.Seq, func(j *Job) error { j.Progress = "b"; return nil }))
			require.NoError(t, b.PutFenced(ctx, job.Seq, testBucket, "b-ok", []byte("{}")))
			require.NoError(t, b.Finish(ctx, job.Seq, Applied, "applied by b"))
			got, err := b.Get(ctx, job.Seq)
			require.NoError(t, err)
			require.Equal(t, Applied, got.State)
			require.Equal(t, "applied by b", got.Reason)
			require.Equal(t, "b", got.Progress)
		})
	}
}

// The same process restarted (a new queue, under the same owner name, as a
// restart that reused the pid and host could be) does not inherit its
// earlier run's token: it must acquire the job anew.
func TestApplyQueueRestartedHolderIsFenced(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	q, st := newApplyTestQueue(t, "same")
	q = New(st, "same", time.Second, clock.Now)
	job := enqueueApply(t, q, "orders", "coord|orders")
	_, err := q.Acquire(ctx, job.Seq)
	require.NoError(t, err)
	restarted := New(st, "same", time.Second, clock.Now)
	require.ErrorIs(t, restarted.Finish(ctx, job.Seq, Applied, ""), ErrNotHolder)
	require.ErrorIs(t, restarted.Fenced(ctx, job.Seq), ErrNotHolder)
	require.NoError(t, q.Finish(ctx, job.Seq, Applied, ""))
}

// Processes racing on one queue: a job is acquired by one of them only, a
// merge enqueued by several is stored once, and a failed job requeued by
// several gets one copy.
func TestApplyQueueRacesAcrossProcesses(t *testing.T) {
	for name, open := range sharedStores() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			stA, stB := open(t)
			queues := []*Queue{New(stA, "a", time.Minute, nil), New(stB, "b", time.Minute, nil),
				New(stA, "c", time.Minute, nil), New(stB, "d", time.Minute, nil)}
			race := func(fn func(q *Queue) error) (ok int32) {
				var wg sync.WaitGroup
				var n atomic.Int32
				for _, q := range queues {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := fn(q); err == nil {
							n.Add(1)
						}
					}()
				}
				wg.Wait()
				return n.Load()
			}
			merge := func(q *Queue) error {
				return q.Enqueue(ctx, &Job{Ref: applyTestRef, Project: "orders", Streams: []string{"s"}, MergeSHA: "abc"})
			}
			require.Equal(t, int32(1), race(merge), "one merge, one job")
			jobs, err := queues[0].List(ctx)
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			seq := jobs[0].Seq
			var winner atomic.Pointer[Queue]
			require.Equal(t, int32(1), race(func(q *Queue) error {
				_, err := q.Acquire(ctx, seq)
				if err == nil {
					winner.Store(q)
				} else if !errors.Is(err, ErrNotRunnable) {
					t.Error(err)
				}
				return err
			}), "one holder")
			require.NoError(t, winner.Load().Finish(ctx, seq, Failed, "boom"))
			copies := map[string]bool{}
			var mu sync.Mutex
			race(func(q *Queue) error {
				c, err := q.Requeue(ctx, seq)
				if err == nil {
					mu.Lock()
					copies[c.Seq] = true
					mu.Unlock()
				}
				return err
			})
			require.Len(t, copies, 1, "every Requeue returned the one copy")
			jobs, err = queues[0].List(ctx)
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			require.Equal(t, Queued, jobs[0].State)
		})
	}
}
