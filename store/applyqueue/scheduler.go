package applyqueue

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/internal/loop"
	"github.com/shardgate/shardgate/store"
)

// DefaultPollInterval is how often the apply scheduler looks for work it
// was not told about: jobs whose holder died and whose lease has now expired.
const DefaultPollInterval = time.Second

// RunFunc runs one acquired apply job and returns its outcome: applied or
// failed, with the reason. It persists its own progress with Queue.Update
// and must return soon after ctx is cancelled (shutdown, or the lease was
// lost); the outcome is then ignored and the job stays unfinished, to be
// resumed by whichever process next acquires it.
type RunFunc func(ctx context.Context, job *Job) (State, string)

// SchedulerOption tunes NewScheduler.
type SchedulerOption func(*Scheduler)

// Scheduler starts every runnable apply job as soon as its streams are
// free, holds its lease while it runs and records its outcome. Jobs with no
// stream in common run in parallel, up to MaxConcurrent at once in this
// process (WithMaxConcurrent); the others wait for a free slot, which goes
// to the repository running the fewest, in merge order within it
// (fairStarts).
type Scheduler struct {
	q   *Queue
	run RunFunc
	log *logrus.Entry
	// Poll is how often the scheduler looks for runnable jobs without being
	// notified (DefaultPollInterval); set it before Start.
	Poll time.Duration
	// Paused says whether to start nothing (the store cannot be reached);
	// may be nil. Set it before Start.
	Paused func() bool

	wake      chan struct{}
	stop      chan struct{}
	loopDone  chan struct{}
	cancel    context.CancelFunc
	jobs      sync.WaitGroup
	startOnce sync.Once
	stopOnce  sync.Once

	// maxConcurrent bounds the jobs this process runs at once; 0: none.
	maxConcurrent int

	mu sync.Mutex
	// running: the Seqs this process has started and not yet finished, each
	// with its job's repository (fairStarts)
	running map[string]string

	// passes numbers the scheduling passes as they begin; onPass, when set
	// before Start, hears how each one ended (tests wait on it instead of
	// watching the clock for what did not happen).
	passes atomic.Int64
	onPass func(passReport)
}

// passReport is how one scheduling pass ended: its number (in the order
// the passes began), the jobs it started and how many of this process's jobs
// were running when it ended.
type passReport struct {
	n       int64
	started []string
	running int
}

// WithMaxConcurrent lets at most n apply jobs run at once in this process
// (n < 1: no bound). Each runs terraform and waits for its streams to
// converge, so applies on disjoint streams would otherwise start without end.
func WithMaxConcurrent(n int) SchedulerOption {
	return func(s *Scheduler) { s.maxConcurrent = max(n, 0) }
}

// MaxConcurrent is the bound of WithMaxConcurrent; 0: none.
func (s *Scheduler) MaxConcurrent() int { return s.maxConcurrent }

// NewScheduler returns a scheduler running the jobs of q with run.
func NewScheduler(q *Queue, run RunFunc, log *logrus.Entry, opts ...SchedulerOption) *Scheduler {
	s := &Scheduler{q: q, run: run, log: log, Poll: DefaultPollInterval,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), loopDone: make(chan struct{}),
		running: map[string]string{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Notify wakes the scheduler (after an Enqueue or Requeue); it never blocks.
func (s *Scheduler) Notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start begins scheduling; a second Start, or one after Close, is an error.
// Jobs run on a context detached from ctx's cancellation (it keeps its
// values); Close ends them.
func (s *Scheduler) Start(ctx context.Context) error {
	started := false
	s.startOnce.Do(func() {
		started = true
		var work context.Context
		work, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
		go s.loop(work)
	})
	if !started {
		return errors.New("start apply scheduler: already started or closed")
	}
	return nil
}

// Close stops starting jobs and waits for running ones until ctx is done;
// then it cancels them and waits for them to return. A cancelled job is left
// as it is, lease included: the lease expires and the next process resumes
// the job. It returns ctx's error when jobs had to be cancelled.
func (s *Scheduler) Close(ctx context.Context) error {
	s.stopOnce.Do(func() { close(s.stop) })
	s.startOnce.Do(func() { close(s.loopDone) }) // never started: nothing runs
	<-s.loopDone
	if s.cancel == nil {
		return nil
	}
	defer s.cancel()
	done := make(chan struct{})
	go func() { s.jobs.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.cancel()
		<-done
		return fmt.Errorf("close apply scheduler: running jobs cancelled: %w", ctx.Err())
	}
}

func (s *Scheduler) loop(ctx context.Context) {
	defer close(s.loopDone)
	timer := time.NewTimer(s.Poll)
	defer timer.Stop()
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		s.schedule(ctx)
		timer.Reset(s.Poll)
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

// schedule starts every runnable job that this process is not running yet.
// The Runnable snapshot is enough to acquire on: a job seen runnable stays
// free of earlier jobs (see Queue.takeLease).
func (s *Scheduler) schedule(ctx context.Context) {
	report := passReport{n: s.passes.Add(1)}
	if s.onPass != nil {
		defer func() {
			s.mu.Lock()
			report.running = len(s.running)
			s.mu.Unlock()
			s.onPass(report)
		}()
	}
	if s.Paused != nil && s.Paused() {
		return
	}
	jobs, err := s.q.Runnable(ctx)
	if err != nil {
		s.log.WithError(err).Error("list runnable apply jobs")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	free := -1
	if s.maxConcurrent > 0 {
		// the next pass, when a job ends, starts the next one
		free = max(s.maxConcurrent-len(s.running), 0)
	}
	for _, j := range fairStarts(jobs, s.running, free) {
		s.running[j.Seq] = applyRepo(j)
		report.started = append(report.started, j.Seq)
		s.jobs.Add(1)
		go s.start(ctx, j.Seq)
	}
}

// start acquires, runs and finishes one job.
func (s *Scheduler) start(ctx context.Context, seq string) {
	defer s.jobs.Done()
	defer func() {
		s.mu.Lock()
		delete(s.running, seq)
		s.mu.Unlock()
		s.Notify()
	}()
	job, err := s.q.takeLease(ctx, seq)
	if err != nil {
		if !errors.Is(err, ErrNotRunnable) && ctx.Err() == nil {
			s.log.WithError(err).WithField(logctx.FieldJob, seq).Error("acquire apply job")
		}
		return
	}
	log := s.log.WithFields(logrus.Fields{logctx.FieldJob: job.Seq, logctx.FieldRepo: job.Ref.FullName(), logctx.FieldPR: job.Ref.Number,
		logctx.FieldProject: job.Project, "attempt": job.Attempt})
	jobCtx, cancel := context.WithCancel(logctx.WithLogger(ctx, log))
	var lost atomic.Bool
	renewed := make(chan struct{})
	go s.renew(jobCtx, cancel, job.Seq, &lost, log, renewed)
	log.Info("apply job started")
	state, reason := s.call(jobCtx, job)
	cancel()
	<-renewed
	switch {
	case ctx.Err() != nil:
		log.Warn("apply job interrupted by shutdown; its lease will expire and the next process resumes it")
		return
	case lost.Load():
		log.Error("apply job lost its lease to another process; outcome not recorded")
		return
	}
	if !state.Finished() {
		reason = fmt.Sprintf("the apply run ended in state %q instead of applied or failed", state)
		state = Failed
	}
	if err := s.q.Finish(context.WithoutCancel(ctx), job.Seq, state, reason); err != nil {
		log.WithError(err).Error("record an apply job's outcome")
		return
	}
	log.WithField("state", state).Info("apply job finished")
}

// renew keeps the lease while the job runs, renewing at a third of it. When
// another process has taken the job over, or no renewal succeeded for a
// whole lease (the store unreachable: another process may have it by now),
// the run is cancelled: two processes must never apply it.
func (s *Scheduler) renew(ctx context.Context, cancel context.CancelFunc, seq string, lost *atomic.Bool,
	log *logrus.Entry, done chan<- struct{}) {
	defer close(done)
	err := loop.Lease{Length: s.q.Lease(),
		Renew: func(ctx context.Context) error { return s.q.Renew(ctx, seq) },
		Gone:  func(err error) bool { return errors.Is(err, ErrNotHolder) || errors.Is(err, store.ErrNotFound) },
		// A transient store error: the lease has time left, try again next tick.
		Retrying: func(err error) { log.WithError(err).Warn("renew apply job lease") },
		Now:      s.q.now,
	}.Keep(ctx)
	if err == nil {
		return
	}
	log.WithError(err).Error("apply job lease lost: stopping the job")
	s.q.drop(seq)
	lost.Store(true)
	cancel()
}

// call runs the job; a panic fails it with the stack.
func (s *Scheduler) call(ctx context.Context, job *Job) (state State, reason string) {
	defer func() {
		if p := recover(); p != nil {
			state, reason = Failed, fmt.Sprintf("apply panic: %v\n%s", p, debug.Stack())
		}
	}()
	return s.run(ctx, job)
}
