package applyqueue

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/logctx"
)

const applyWait = 5 * time.Second

func startApplyScheduler(t *testing.T, q *Queue, run RunFunc, opts ...SchedulerOption) *Scheduler {
	t.Helper()
	s := NewScheduler(q, run, logctx.NewLogger(io.Discard, logrus.InfoLevel), opts...)
	s.Poll = 20 * time.Millisecond
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), applyWait)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

// waitApply waits until the job with seq satisfies ok.
func waitApply(t *testing.T, q *Queue, seq string, what string, ok func(*Job) bool) *Job {
	t.Helper()
	var job *Job
	require.Eventually(t, func() bool {
		j, err := q.Get(context.Background(), seq)
		job = j
		return err == nil && ok(j)
	}, applyWait, 5*time.Millisecond, "job %s: never %s", seq, what)
	return job
}

// awaitRelease holds a run until release is closed or the scheduler's
// Close cancels it (a failed test).
func awaitRelease(ctx context.Context, release <-chan struct{}) {
	select {
	case <-release:
	case <-ctx.Done():
	}
}

// waitApplyState waits until the job with seq is in state.
func waitApplyState(t *testing.T, q *Queue, seq string, state State) *Job {
	t.Helper()
	return waitApply(t, q, seq, "reached "+string(state), func(j *Job) bool { return j.State == state })
}

func TestApplySchedulerDisjointStreamsOverlap(t *testing.T) {
	q, _ := newApplyTestQueue(t, "p1")
	j1 := enqueueApply(t, q, "j1", "a")
	j2 := enqueueApply(t, q, "j2", "b")
	var both sync.WaitGroup
	both.Add(2)
	allIn := make(chan struct{})
	go func() { both.Wait(); close(allIn) }()
	startApplyScheduler(t, q, func(ctx context.Context, job *Job) (State, string) {
		both.Done()
		select { // each run waits until the other one is running too
		case <-allIn:
			return Applied, ""
		case <-time.After(applyWait):
			return Failed, "the other job never ran at the same time"
		}
	})
	require.Empty(t, waitApplyState(t, q, j1.Seq, Applied).Reason)
	waitApplyState(t, q, j2.Seq, Applied)
}

func TestApplySchedulerOneStreamWaits(t *testing.T) {
	q, _ := newApplyTestQueue(t, "p1")
	j1 := enqueueApply(t, q, "j1", "a")
	j2 := enqueueApply(t, q, "j2", "a", "b")
	release := make(chan struct{})
	started := make(chan string, 2)
	passes, watch := watchPasses()
	s := startApplyScheduler(t, q, func(ctx context.Context, job *Job) (State, string) {
		started <- job.Project
		if job.Project == "j1" {
			awaitRelease(ctx, release)
		}
		return Applied, ""
	}, watch)
	require.Equal(t, "j1", <-started)
	require.Equal(t, []string{j1.Seq}, passes.started(t, s), "j2 must not start while j1 holds stream a")
	close(release)
	require.Equal(t, "j2", <-started)
	waitApplyState(t, q, j1.Seq, Applied)
	waitApplyState(t, q, j2.Seq, Applied)
}

func TestApplySchedulerCrossPattern(t *testing.T) {
	q, _ := newApplyTestQueue(t, "p1")
	jobs := []*Job{
		enqueueApply(t, q, "j1", "a"),
		enqueueApply(t, q, "j2", "b"),
		enqueueApply(t, q, "j3", "a", "b"),
		enqueueApply(t, q, "j4", "b", "a"),
		enqueueApply(t, q, "j5", "a"),
	}
	release := map[string]chan struct{}{}
	for _, j := range jobs {
		release[j.Project] = make(chan struct{})
	}
	started := make(chan string, len(jobs))
	passes, watch := watchPasses()
	s := startApplyScheduler(t, q, func(ctx context.Context, job *Job) (State, string) {
		started <- job.Project
		awaitRelease(ctx, release[job.Project])
		return Applied, ""
	}, watch)
	seqs := func(n int) []string {
		out := []string{}
		for _, j := range jobs[:n] {
			out = append(out, j.Seq)
		}
		return out
	}
	require.ElementsMatch(t, []string{"j1", "j2"}, []string{<-started, <-started})
	require.Equal(t, seqs(2), passes.started(t, s), "j3 waits for j1 and j2")
	close(release["j1"])
	waitApplyState(t, q, jobs[0].Seq, Applied)
	require.Equal(t, seqs(2), passes.started(t, s), "j3 still waits for j2 on stream b")
	for i, next := range []string{"j3", "j4", "j5"} {
		close(release[jobs[i+1].Project])
		require.Equal(t, next, <-started)
		require.Equal(t, seqs(i+3), passes.started(t, s), "%s alone: the rest wait behind it", next)
	}
	close(release["j5"])
	for _, j := range jobs {
		waitApplyState(t, q, j.Seq, Applied)
	}
}

func TestApplySchedulerCloseLeavesJobToNextProcess(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	_, st := newApplyTestQueue(t, "unused")
	q1 := New(st, "p1", time.Second, clock.Now)
	job := enqueueApply(t, q1, "orders", "a")

	started := make(chan error)
	s1 := NewScheduler(q1, func(ctx context.Context, j *Job) (State, string) {
		started <- q1.Update(ctx, j.Seq, func(j *Job) error { j.State = Applying; return nil })
		<-ctx.Done()
		return Applied, "must not be recorded: the run was cut short"
	}, logctx.NewLogger(io.Discard, logrus.InfoLevel))
	s1.Poll = 20 * time.Millisecond
	require.NoError(t, s1.Start(context.Background()))
	require.NoError(t, <-started)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s1.Close(ctx), context.DeadlineExceeded)

	left, err := q1.Get(context.Background(), job.Seq)
	require.NoError(t, err)
	require.Equal(t, Applying, left.State, "not finished")
	require.Equal(t, "p1", left.LeaseOwner, "still leased until the lease expires")

	q2 := New(st, "p2", time.Second, clock.Now)
	resumed := make(chan *Job, 2)
	passes, watch := watchPasses()
	s2 := startApplyScheduler(t, q2, func(ctx context.Context, j *Job) (State, string) {
		resumed <- j
		return Applied, ""
	}, watch)
	require.Empty(t, passes.started(t, s2), "resumed while p1's lease was live")
	clock.Advance(time.Second)
	s2.Notify()
	select {
	case j := <-resumed:
		require.Equal(t, 2, j.Attempt)
		require.Equal(t, Applying, j.State, "the run sees where the last one stopped")
		require.Equal(t, "p2", j.LeaseOwner)
	case <-time.After(applyWait):
		t.Fatal("the job was never resumed after its lease expired")
	}
	done := waitApplyState(t, q2, job.Seq, Applied)
	require.Empty(t, done.LeaseOwner)
	require.Empty(t, resumed, "resumed once")
}

func TestApplySchedulerLostLeaseCancelsRun(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	_, st := newApplyTestQueue(t, "unused")
	q1 := New(st, "p1", 150*time.Millisecond, clock.Now)
	job := enqueueApply(t, q1, "orders", "a")
	started, stopped := make(chan struct{}), make(chan struct{})
	passes, watch := watchPasses()
	s := startApplyScheduler(t, q1, func(ctx context.Context, j *Job) (State, string) {
		close(started)
		<-ctx.Done()
		close(stopped)
		return Applied, "must not be recorded: the lease was lost"
	}, watch)
	<-started
	// The holder stalls past its lease (the fake clock jumps) and another
	// process takes the job over.
	clock.Advance(time.Second)
	other := New(st, "p2", time.Minute, clock.Now)
	_, err := other.Acquire(context.Background(), job.Seq)
	require.NoError(t, err)
	select {
	case <-stopped:
	case <-time.After(applyWait):
		t.Fatal("the run was not cancelled after its lease was taken over")
	}
	require.Equal(t, []string{job.Seq}, passes.idle(t, s), "the run is over, and not started again")
	got, err := other.Get(context.Background(), job.Seq)
	require.NoError(t, err)
	require.Equal(t, Queued, got.State)
	require.Equal(t, "p2", got.LeaseOwner)
	require.NoError(t, other.Finish(context.Background(), job.Seq, Applied, ""))
}

func TestApplySchedulerOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		run        RunFunc
		wantState  State
		wantReason []string
	}{
		{name: "applied", run: func(context.Context, *Job) (State, string) { return Applied, "" },
			wantState: Applied},
		{name: "failed with its reason", run: func(context.Context, *Job) (State, string) {
			return Failed, "plan changed since review"
		}, wantState: Failed, wantReason: []string{"plan changed since review"}},
		{name: "panic fails with the stack", run: func(context.Context, *Job) (State, string) {
			panic("kaboom")
		}, wantState: Failed, wantReason: []string{"apply panic: kaboom", "goroutine ", "scheduler_test.go"}},
		{name: "a state that is not final fails", run: func(context.Context, *Job) (State, string) {
			return Converging, ""
		}, wantState: Failed, wantReason: []string{`ended in state "converging"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newApplyTestQueue(t, "p1")
			job := enqueueApply(t, q, "orders", "a")
			next := enqueueApply(t, q, "billing", "a")
			startApplyScheduler(t, q, tt.run)
			got := waitApplyState(t, q, job.Seq, tt.wantState)
			for _, want := range tt.wantReason {
				require.Contains(t, got.Reason, want)
			}
			require.Empty(t, got.LeaseOwner)
			require.Equal(t, 1, got.Attempt)
			waitApplyState(t, q, next.Seq, tt.wantState) // the stream was released either way
		})
	}
}

func TestApplySchedulerRequeueRunsOnceAfterLaterJobs(t *testing.T) {
	ctx := context.Background()
	q, _ := newApplyTestQueue(t, "p1")
	j1 := enqueueApply(t, q, "j1", "a")
	j2 := enqueueApply(t, q, "j2", "a")
	release := make(chan struct{})
	var mu sync.Mutex
	var order []string
	passes, watch := watchPasses()
	s := startApplyScheduler(t, q, func(ctx context.Context, job *Job) (State, string) {
		mu.Lock()
		order = append(order, job.Project+"@"+job.Seq)
		mu.Unlock()
		switch {
		case job.Project == "j2":
			awaitRelease(ctx, release)
		case job.RetryOf == "":
			return Failed, "state lock held"
		}
		return Applied, ""
	}, watch)
	waitApplyState(t, q, j1.Seq, Failed)
	waitApply(t, q, j2.Seq, "started", func(j *Job) bool { return j.Attempt == 1 }) // then held on release
	retry, err := q.Requeue(ctx, j1.Seq)
	require.NoError(t, err)
	require.Equal(t, []string{j1.Seq, j2.Seq}, passes.started(t, s), "the retry waits behind j2 on stream a")
	got, err := q.Get(ctx, retry.Seq)
	require.NoError(t, err)
	require.Zero(t, got.Attempt, "the retry waits behind j2 on stream a")
	close(release)
	waitApplyState(t, q, retry.Seq, Applied)
	waitApplyState(t, q, j2.Seq, Applied)
	require.Equal(t, []string{j1.Seq, j2.Seq, retry.Seq}, passes.idle(t, s), "each started once")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"j1@" + j1.Seq, "j2@" + j2.Seq, "j1@" + retry.Seq}, order)
}

func TestApplySchedulerStartTwice(t *testing.T) {
	q, _ := newApplyTestQueue(t, "p1")
	s := startApplyScheduler(t, q, func(context.Context, *Job) (State, string) { return Applied, "" })
	require.Error(t, s.Start(context.Background()))
	closed := NewScheduler(q, nil, logctx.NewLogger(io.Discard, logrus.InfoLevel))
	require.NoError(t, closed.Close(context.Background()), "closing a scheduler that never started")
	require.Error(t, closed.Start(context.Background()), "starting a closed scheduler")
}

// Jobs on disjoint streams run at once, but no more than WithMaxConcurrent:
// the third waits for a slot and starts, in merge order, when one ends.
func TestApplySchedulerMaxConcurrent(t *testing.T) {
	q, _ := newApplyTestQueue(t, "p1")
	j1 := enqueueApply(t, q, "j1", "a")
	j2 := enqueueApply(t, q, "j2", "b")
	j3 := enqueueApply(t, q, "j3", "c")
	release := map[string]chan struct{}{"j1": make(chan struct{}), "j2": make(chan struct{}), "j3": make(chan struct{})}
	started := make(chan string, 3)
	passes, watch := watchPasses()
	s := startApplyScheduler(t, q, func(ctx context.Context, job *Job) (State, string) {
		started <- job.Project
		awaitRelease(ctx, release[job.Project])
		return Applied, ""
	}, watch, WithMaxConcurrent(2))
	require.Equal(t, 2, s.MaxConcurrent())
	require.ElementsMatch(t, []string{"j1", "j2"}, []string{<-started, <-started})
	require.Equal(t, []string{j1.Seq, j2.Seq}, passes.started(t, s), "j3 must wait while two jobs run")
	close(release["j2"])
	require.Equal(t, "j3", <-started)
	close(release["j1"])
	close(release["j3"])
	for _, seq := range []string{j1.Seq, j2.Seq, j3.Seq} {
		waitApplyState(t, q, seq, Applied)
	}
}
