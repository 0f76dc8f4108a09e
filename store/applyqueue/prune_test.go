package applyqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
)

// readWatch is a store that notes every apply job record read through it
// (Get, List and reads inside Tx), decoded.
type readWatch struct {
	store.Store
	mu   sync.Mutex
	read []Job
}

func (w *readWatch) saw(bucket string, v []byte) {
	if bucket != applyBucket && bucket != applyLiveBucket {
		return
	}
	var j Job
	if json.Unmarshal(v, &j) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.read = append(w.read, j)
}

// reset forgets what was read and returns it.
func (w *readWatch) reset() []Job {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.read
	w.read = nil
	return out
}

func (w *readWatch) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	v, err := w.Store.Get(ctx, bucket, key)
	if err == nil {
		w.saw(bucket, v)
	}
	return v, err
}

func (w *readWatch) List(ctx context.Context, bucket, prefix string) ([]store.KV, error) {
	kvs, err := w.Store.List(ctx, bucket, prefix)
	for _, kv := range kvs {
		w.saw(bucket, kv.Value)
	}
	return kvs, err
}

func (w *readWatch) Tx(ctx context.Context, fn func(tx store.RecordTx) error) error {
	return w.Store.Tx(ctx, func(tx store.RecordTx) error { return fn(watchTx{RecordTx: tx, w: w}) })
}

type watchTx struct {
	store.RecordTx
	w *readWatch
}

func (t watchTx) Get(bucket, key string) ([]byte, error) {
	v, err := t.RecordTx.Get(bucket, key)
	if err == nil {
		t.w.saw(bucket, v)
	}
	return v, err
}

// historyQueue is a queue on a watched store holding 60 finished jobs of
// pull request 7 (applied and failed) and, behind them, two live jobs of
// pull request 8: one runnable, one waiting behind it on stream s.
func historyQueue(t *testing.T) (*Queue, *readWatch, []*Job) {
	t.Helper()
	ctx := context.Background()
	w := &readWatch{Store: openApplyStore(t, filepath.Join(t.TempDir(), "store.db"))}
	q := New(w, "p1", time.Minute, nil)
	for i := range 60 {
		j := enqueueApply(t, q, fmt.Sprintf("old-%d", i), "s", fmt.Sprintf("t%d", i))
		_, err := q.Acquire(ctx, j.Seq)
		require.NoError(t, err)
		state := Applied
		if i%3 == 0 {
			state = Failed
		}
		require.NoError(t, q.Finish(ctx, j.Seq, state, ""))
	}
	ref := pullreq.Ref{Installation: 1, Owner: "acme", Repo: "infra", Number: 8}
	var live []*Job
	for _, p := range []string{"first", "second"} {
		j := &Job{Ref: ref, Project: p, Streams: []string{"s"}}
		require.NoError(t, q.Enqueue(ctx, j))
		live = append(live, j)
	}
	w.reset()
	return q, w, live
}

// A scheduling pass reads the live jobs only: however long the history,
// no finished job's record is read to find and start the runnable ones.
func TestApplySchedulingPassReadsNoFinishedJob(t *testing.T) {
	ctx := context.Background()
	q, w, live := historyQueue(t)
	started := make(chan string, 2)
	s := NewScheduler(q, func(ctx context.Context, j *Job) (State, string) {
		started <- j.Project
		<-ctx.Done()
		return Failed, "stopped"
	}, logctx.Logger(ctx))
	work, cancel := context.WithCancel(ctx)
	s.schedule(work)
	require.Equal(t, "first", <-started)
	cancel()
	s.jobs.Wait()

	blockers, err := q.Blockers(ctx, live[1].Seq)
	require.NoError(t, err)
	require.Len(t, blockers, 1)
	require.Equal(t, live[0].Seq, blockers[0].Seq)

	read := w.reset()
	require.NotEmpty(t, read)
	for _, j := range read {
		require.False(t, j.State.Finished(), "a scheduling pass read finished job %s (%s)", j.Seq, j.State)
	}
	require.LessOrEqual(t, len(read), 12, "reads grow with the two live jobs, not the history")
}

// ListForPR reads the jobs of its pull request, not every job ever made.
func TestApplyQueueListForPRReadsOnlyItsPR(t *testing.T) {
	ctx := context.Background()
	q, w, live := historyQueue(t)
	jobs, err := q.ListForPR(ctx, live[0].Ref)
	require.NoError(t, err)
	require.Equal(t, []string{"first", "second"}, applyProjects(jobs))
	for _, j := range w.reset() {
		require.Equal(t, live[0].Ref, j.Ref, "ListForPR read job %s of another pull request", j.Seq)
	}
	old, err := q.ListForPR(ctx, applyTestRef)
	require.NoError(t, err)
	require.Len(t, old, 60)
}

// A queue written before the indexes existed is indexed at its first use:
// its unfinished jobs are scheduled and ListForPR finds every job.
func TestApplyQueueIndexesAnUnindexedQueue(t *testing.T) {
	ctx := context.Background()
	st := openApplyStore(t, filepath.Join(t.TempDir(), "store.db"))
	for i, state := range []State{Applied, Queued, Failed} {
		j := Job{Seq: fmt.Sprintf("%012d", i+1), Ref: applyTestRef, Project: fmt.Sprintf("p%d", i), Streams: []string{"s"}, State: state}
		raw, err := json.Marshal(j)
		require.NoError(t, err)
		require.NoError(t, st.Put(ctx, applyBucket, j.Seq, raw))
	}
	require.NoError(t, st.Put(ctx, applySeqBucket, applySeqKey, []byte("3")))
	q := New(st, "p1", time.Minute, nil)
	runnable, err := q.Runnable(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"p1"}, applyProjects(runnable))
	jobs, err := q.ListForPR(ctx, applyTestRef)
	require.NoError(t, err)
	require.Equal(t, []string{"p0", "p1", "p2"}, applyProjects(jobs))
	next := enqueueApply(t, q, "p3", "s")
	require.Equal(t, "000000000004", next.Seq)
	runnable, err = q.Runnable(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"p1"}, applyProjects(runnable), "p3 waits behind p1 on s")
}
