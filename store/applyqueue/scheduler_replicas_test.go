package applyqueue

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store/storeopen"
	"github.com/shardgate/shardgate/store/storetest"
)

// replicaRecorder is applyRecorder across processes that can be killed: a
// run cut short by its process's end (its context cancelled) is counted as
// interrupted, not as a run, and frees its streams at once, as a killed
// process's apply would.
type replicaRecorder struct {
	*applyRecorder
	mu          sync.Mutex
	interrupted map[string]int // Seq → runs cut short
	finished    map[string]int // Seq → runs to the end
}

// runHanging is run for a process whose applies, once hang is armed, stop
// making progress (as one stuck mid terraform apply) until it ends; hung is
// closed when the first such run started. ran keeps the runs it began before
// hang was armed: in flight, and the Seqs of those that ran to the end.
func (r *replicaRecorder) runHanging(hang *atomic.Bool, hung chan struct{}, ran *runsBefore) RunFunc {
	var once sync.Once
	return func(ctx context.Context, job *Job) (State, string) {
		ran.start() // before the look at hang: settled then sees it in flight
		if !hang.Load() {
			state, reason := r.run(ctx, job)
			ran.end(job.Seq, state == Applied)
			return state, reason
		}
		ran.end(job.Seq, false)
		r.applyRecorder.mu.Lock()
		d := r.durations[job.Project]
		r.durations[job.Project] = time.Hour
		r.applyRecorder.mu.Unlock()
		defer func() {
			r.applyRecorder.mu.Lock()
			r.durations[job.Project] = d
			r.applyRecorder.mu.Unlock()
		}()
		once.Do(func() { close(hung) })
		return r.run(ctx, job)
	}
}

// runsBefore are a replica's runs begun before its applies hung.
type runsBefore struct {
	mu       sync.Mutex
	inFlight int
	done     []string // Seqs run to the end
}

func (b *runsBefore) start() { b.mu.Lock(); b.inFlight++; b.mu.Unlock() }

func (b *runsBefore) end(seq string, applied bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight--
	if applied {
		b.done = append(b.done, seq)
	}
}

// settled says whether none is in flight and q holds the outcome of every
// one that ran to the end: a kill now cuts only hung runs short. (A kill
// between a run's end and its outcome's write would have the run repeated,
// rightly, by the replica taking the job over.)
func (b *runsBefore) settled(ctx context.Context, q *Queue) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inFlight > 0 {
		return false
	}
	for _, seq := range b.done {
		if j, err := q.Get(ctx, seq); err != nil || !j.State.Finished() {
			return false
		}
	}
	return true
}

func (r *replicaRecorder) run(ctx context.Context, job *Job) (State, string) {
	r.applyRecorder.mu.Lock()
	for _, s := range job.Streams {
		if h := r.holders[s]; h != "" {
			r.overlap = append(r.overlap, fmt.Sprintf("%s and %s on %s", h, job.Project, s))
		}
		r.holders[s] = job.Project
	}
	r.applyRecorder.mu.Unlock()
	start := time.Now()
	r.applyRecorder.mu.Lock()
	d := r.durations[job.Project]
	r.applyRecorder.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	cut := false
	select {
	case <-t.C:
	case <-ctx.Done():
		cut = true
	}
	end := time.Now()
	r.applyRecorder.mu.Lock()
	for _, s := range job.Streams {
		if r.holders[s] == job.Project {
			delete(r.holders, s)
		}
	}
	if !cut {
		r.spans = append(r.spans, applySpan{seq: job.Seq, streams: job.Streams, start: start, end: end})
	}
	r.applyRecorder.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if cut {
		r.interrupted[job.Seq]++
		return Failed, "interrupted"
	}
	r.finished[job.Seq]++
	return Applied, ""
}

// replicaLoad is 1,000 merges over 50 streams, a tenth of them linking two.
func replicaLoad(n, streams int, d time.Duration) []applySim {
	rng := rand.New(rand.NewPCG(1, 2))
	var jobs []applySim
	for i := range n {
		ss := []string{fmt.Sprintf("coord|stream-%02d", rng.IntN(streams))}
		if i%10 == 9 {
			ss = append(ss, fmt.Sprintf("coord|stream-%02d", rng.IntN(streams)))
		}
		jobs = append(jobs, applySim{project: fmt.Sprintf("p%04d", i), streams: normalizeStreams(ss), d: d})
	}
	return jobs
}

// Two schedulers, as two replicas, share one PostgreSQL store and 1,000
// merges over 50 streams; one is killed part way (its runs cut short, its
// leases left to expire). No stream ever runs two applies at once, each
// stream runs its applies in merge order, and every merge is applied once:
// the killed replica's cut-short runs are resumed by the other, and nothing
// else runs twice.
func TestApplySchedulers1000MergesOnTwoReplicasOneKilled(t *testing.T) {
	// The lease must outlast the worst delay of a live replica's renewal
	// (every third of it) on a loaded 2-core host: at 600 ms, a load of ~20
	// let one lapse while its apply ran, and the other replica rightly took
	// it over (1,017 runs). The killed replica's leases expire after it.
	const lease = 2 * time.Second
	url := storetest.PostgresURL(t)
	qa := New(storeopen.PostgresAt(t, url, lease), "replica-a", lease, nil)
	qb := New(storeopen.PostgresAt(t, url, lease), "replica-b", lease, nil)
	jobs := replicaLoad(1000, 50, 15*time.Millisecond)
	ctx := context.Background()
	// Merges arrive through either replica.
	for i, j := range jobs {
		q := qa
		if i%2 == 1 {
			q = qb
		}
		require.NoError(t, q.Enqueue(ctx, &Job{Ref: applyTestRef, Project: j.project, Streams: j.streams,
			MergeSHA: fmt.Sprintf("sha-%d", i)}))
	}
	rec := &replicaRecorder{applyRecorder: newApplyRecorder(jobs), interrupted: map[string]int{}, finished: map[string]int{}}
	log := logctx.NewLogger(io.Discard, logrus.WarnLevel)
	var hang atomic.Bool
	hung := make(chan struct{})
	ran := &runsBefore{}
	a := NewScheduler(qa, rec.runHanging(&hang, hung, ran), log)
	b := NewScheduler(qb, rec.run, log)
	a.Poll, b.Poll = 50*time.Millisecond, 50*time.Millisecond
	start := time.Now()
	require.NoError(t, a.Start(ctx))
	require.NoError(t, b.Start(ctx))
	defer func() { require.NoError(t, b.Close(ctx)) }()

	finished := func() int {
		all, err := qb.List(ctx)
		require.NoError(t, err)
		return len(slices.DeleteFunc(all, func(j *Job) bool { return !j.State.Finished() }))
	}
	require.Eventually(t, func() bool { return finished() >= 300 }, 2*time.Minute, 5*time.Millisecond)
	hang.Store(true)
	<-hung
	require.Eventually(t, func() bool { return ran.settled(ctx, qa) }, time.Minute, 5*time.Millisecond)
	// Killed in the middle of an apply: its running applies are cut short,
	// their leases left to expire.
	dead, cancel := context.WithCancel(ctx)
	cancel()
	require.Error(t, a.Close(dead))
	require.Eventually(t, func() bool { return finished() == len(jobs) }, 5*time.Minute, 10*time.Millisecond)
	makespan := time.Since(start)

	rec.check(t, len(jobs))
	all, err := qb.List(ctx)
	require.NoError(t, err)
	require.Len(t, all, len(jobs), "nothing lost")
	for _, j := range all {
		require.Equal(t, Applied, j.State, "job %s: %s", j.Seq, j.Reason)
		require.Equal(t, 1, rec.finished[j.Seq], "job %s applied once", j.Seq)
		// The kill may also end an acquisition whose run had not begun (it
		// committed as the context ended): an attempt without a run.
		require.GreaterOrEqual(t, j.Attempt, 1+rec.interrupted[j.Seq], "job %s: an attempt per run", j.Seq)
		require.LessOrEqual(t, j.Attempt, 2+rec.interrupted[j.Seq], "job %s: at most one attempt lost to the kill", j.Seq)
	}
	cut := 0
	for _, n := range rec.interrupted {
		require.Equal(t, 1, n, "only the kill cut runs short")
		cut++
	}
	require.Positive(t, cut, "the kill came while applies ran")
	t.Logf("1,000 merges over 50 streams, one of two replicas killed after 300 (%d runs cut short): makespan %s, critical path %s",
		cut, makespan.Round(time.Millisecond), applyCriticalPath(jobs))
}
