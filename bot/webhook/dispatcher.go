package webhook

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/internal/loop"
	"github.com/shardgate/shardgate/internal/retry"
	"github.com/shardgate/shardgate/store"
)

// DefaultPollInterval is how often idle workers look for jobs they were not told about.
const DefaultPollInterval = time.Second

// Dispatcher runs queued jobs on a fixed number of workers. Each job gets a fresh
// context carrying only the logger; a panic becomes a failed job with its stack.
type Dispatcher struct {
	store    store.Store
	handlers registry
	workers  int
	owner    string
	log      *logrus.Entry

	// Poll is how often idle workers look for jobs they were not told about.
	Poll time.Duration
	// Lease is how long a claim lasts without a heartbeat; workers renew
	// every job they hold at a third of it.
	Lease time.Duration
	// Attempts bounds the tries of a job failing on errors Transient
	// accepts; the pause between tries grows from RetryBase to RetryMax.
	Attempts            int
	RetryBase, RetryMax time.Duration
	// Transient says whether a job's error is worth trying the job again
	// for; nil: no error is.
	Transient func(error) bool
	// Wait says whether a job's error is a wait the job did not cause
	// (GitHub's rate limit): the job is postponed until the time it returns,
	// its claim not counted as an attempt, however often it meets one; why
	// names the limit in the log. nil: no error is.
	Wait func(err error) (until time.Time, why string, ok bool)
	// Observe records each job's outcome and duration (metrics); may be nil.
	Observe func(event string, err error, d time.Duration)
	// Failed reports a job that failed for good (on its PR); may be nil.
	Failed func(ctx context.Context, job *store.Job, err error)
	// Retried is told of a job handed back for another try after err (a
	// metric); may be nil.
	Retried func(job *store.Job, err error)
	// Now is the clock a retry's not-before is set on: the store's (nil: the
	// wall clock).
	Now func() time.Time
	// Paused says whether claiming is paused (the store cannot be reached,
	// StoreHealth.Paused); may be nil.
	Paused func() bool

	running runningJobs

	wake   chan struct{}
	stop   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// NewDispatcher builds a dispatcher; owner names this process in job records
// and must be unique per process and start (see store.Store.Claim): each
// worker claims as owner/w<n>.
func NewDispatcher(st store.Store, handlers []EventHandler, workers int, owner string, log *logrus.Entry) (*Dispatcher, error) {
	if workers < 1 {
		return nil, fmt.Errorf("new dispatcher: workers must be at least 1, got %d", workers)
	}
	reg, err := newRegistry(handlers)
	if err != nil {
		return nil, fmt.Errorf("new dispatcher: %w", err)
	}
	return &Dispatcher{store: st, handlers: reg, workers: workers, owner: owner, log: log,
		Poll: DefaultPollInterval, wake: make(chan struct{}, 1), stop: make(chan struct{}), Lease: store.DefaultLease,
		Attempts: DefaultJobAttempts, RetryBase: DefaultJobRetryBase, RetryMax: DefaultJobRetryMaxWait}, nil
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Events lists the event types that have a handler.
func (d *Dispatcher) Events() []string { return d.handlers.events() }

// Notify wakes an idle worker; it never blocks.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Start requeues jobs a crash cut short, then starts the workers.
func (d *Dispatcher) Start(ctx context.Context) error {
	n, err := d.store.RecoverRunning(ctx)
	if err != nil {
		return fmt.Errorf("start dispatcher: %w", err)
	}
	if n > 0 {
		d.log.WithField("jobs", n).Warn("requeued jobs left running by an earlier process")
	}
	var workCtx context.Context
	workCtx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for i := 0; i < d.workers; i++ {
		d.wg.Add(1)
		go d.work(workCtx, fmt.Sprintf("%s/w%d", d.owner, i))
	}
	d.Notify()
	return nil
}

// work claims and runs jobs as owner, this worker's own name: a job another
// worker of this process took over after its lease expired is then not this
// worker's to renew or finish.
func (d *Dispatcher) work(ctx context.Context, owner string) {
	defer d.wg.Done()
	for {
		select {
		case <-d.stop:
			return
		default:
		}
		if d.Paused != nil && d.Paused() {
			d.idle()
			continue
		}
		job, err := d.store.Claim(ctx, owner)
		if err != nil {
			d.log.WithError(err).Error("claim a job")
		}
		if job == nil {
			if !d.idle() {
				return
			}
			continue
		}
		// Another worker may find more work while this one runs.
		d.Notify()
		d.run(ctx, job)
	}
}

// idle waits for a notification or the poll interval; false once Close was called.
func (d *Dispatcher) idle() bool {
	select {
	case <-d.stop:
		return false
	case <-d.wake:
	case <-time.After(d.Poll):
	}
	return true
}

// run handles one job, renewing its lease meanwhile, and records the
// outcome. A job whose context was cancelled by Close is handed back to the
// queue, not failed; a job whose lease was lost is left to its new owner:
// nothing is recorded or reported.
func (d *Dispatcher) run(ctx context.Context, job *store.Job) {
	log := d.log.WithFields(logrus.Fields{logctx.FieldJob: job.ID, logctx.FieldDelivery: job.DeliveryID, logctx.FieldEvent: job.Event})
	if len(job.Coalesced) > 0 {
		log = log.WithField("coalesced", len(job.Coalesced))
	}
	jobCtx, cancelCause := context.WithCancelCause(logctx.WithLogger(withCoalesced(withJobID(ctx, job.ID), job.Coalesced), log))
	cancel := func() { cancelCause(nil) }
	d.running.add(job.ID, cancelCause)
	lost := make(chan struct{})
	renewing := make(chan struct{})
	go func() {
		defer close(renewing)
		d.heartbeat(jobCtx, job, cancel, lost, log)
	}()
	start := time.Now()
	err := d.handle(jobCtx, job)
	d.running.done(job.ID) // before its outcome is recorded: a done job is not cancelled
	cancel()
	<-renewing
	select {
	case <-lost:
		log.WithError(err).Error("job lost its lease (another replica took it over); outcome not recorded")
		return
	default:
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		if rerr := d.store.Release(context.WithoutCancel(ctx), job.ID, job.Owner); rerr != nil {
			log.WithError(rerr).Error("hand back an interrupted job")
		}
		log.Warn("job interrupted by shutdown; handed back to the queue")
		return
	}
	if c := Cancelled(jobCtx); c != nil && err != nil {
		d.recordCancelled(ctx, job, c, log)
		return
	}
	if d.Observe != nil {
		d.Observe(job.Event, err, time.Since(start))
	}
	d.record(ctx, job, err, log.WithField("duration_ms", time.Since(start).Milliseconds()))
}

// record stores a job's outcome: a retry after a transient failure, else
// done or failed (reported on its PR).
func (d *Dispatcher) record(ctx context.Context, job *store.Job, err error, log *logrus.Entry) {
	ctx = context.WithoutCancel(ctx)
	if err != nil && d.Wait != nil {
		if until, why, ok := d.Wait(err); ok {
			if d.postpone(ctx, job, err, until, why, log) {
				return
			}
		}
	}
	if err != nil && d.Transient != nil && d.Transient(err) && job.Attempts < d.Attempts {
		wait := d.jobBackoff(job.Attempts)
		rerr := d.persist(log, func() error { return d.store.Retry(ctx, job.ID, job.Owner, err, d.now().Add(wait)) })
		if rerr == nil {
			log.WithError(err).WithFields(logrus.Fields{"attempt": job.Attempts, "retry_in_ms": wait.Milliseconds()}).
				Warn("job failed on a transient error; it will be retried")
			if d.Retried != nil {
				d.Retried(job, err)
			}
			return
		}
		if errors.Is(rerr, store.ErrLeaseLost) || errors.Is(rerr, store.ErrNotRunning) {
			log.WithError(rerr).Error("job lost its lease before its retry was recorded; left to its new owner")
			return
		}
		log.WithError(rerr).Error("hand a job back for a retry")
	}
	if cerr := d.persist(log, func() error { return d.store.Complete(ctx, job.ID, job.Owner, err) }); cerr != nil {
		log.WithError(cerr).Error("record a job's outcome")
		if errors.Is(cerr, store.ErrLeaseLost) || errors.Is(cerr, store.ErrNotRunning) {
			return // another owner runs it now: it reports, not this one
		}
	}
	if err != nil {
		log.WithError(err).WithField("attempt", job.Attempts).Error("job failed")
		if d.Failed != nil {
			d.Failed(logctx.WithLogger(ctx, log), job, err)
		}
		return
	}
	log.Info("job done")
}

// postpone hands a job that met a wait back until then; false when that
// could not be recorded and the outcome is the usual one's to record.
func (d *Dispatcher) postpone(ctx context.Context, job *store.Job, err error, until time.Time, why string, log *logrus.Entry) bool {
	perr := d.persist(log, func() error { return d.store.Postpone(ctx, job.ID, job.Owner, err, until) })
	switch {
	case perr == nil:
		log.WithError(err).WithFields(logrus.Fields{"limit": why, "until": until.UTC().Format(time.RFC3339)}).
			Warn("job waits for a limit; it continues then")
		return true
	case errors.Is(perr, store.ErrLeaseLost) || errors.Is(perr, store.ErrNotRunning):
		log.WithError(perr).Error("job lost its lease before its wait was recorded; left to its new owner")
		return true
	}
	log.WithError(perr).Error("hand a job back to wait for a limit")
	return false
}

// persist records a job's outcome with write, trying again while the store
// cannot be reached: the job ran, and left running in the store it would run
// again once its lease expired. It waits while claiming is paused (no write
// is tried until the store answers pings again) and between tries; it gives
// up at Close, or when the store answers that the job is another owner's or
// not running (then its new owner reports).
func (d *Dispatcher) persist(log *logrus.Entry, write func() error) error {
	pause := retry.Backoff{Initial: persistRetryBase, Max: max(d.Poll, persistRetryBase)}
	warned := false
	for try := 1; ; try++ {
		if d.Paused == nil || !d.Paused() {
			err := write()
			if err == nil || errors.Is(err, store.ErrLeaseLost) || errors.Is(err, store.ErrNotRunning) ||
				errors.Is(err, store.ErrNotFound) {
				return err
			}
			if !warned {
				log.WithError(err).Warn("could not record a job's outcome; trying again until the store answers")
				warned = true
			}
		}
		select {
		case <-d.stop:
			return errors.New("gave up recording a job's outcome at shutdown: the job runs again once its lease expires")
		case <-time.After(pause.Delay(try)):
		}
	}
}

// persistRetryBase is the first pause before persist tries again.
const persistRetryBase = 20 * time.Millisecond

// heartbeat renews the job's lease every third of it until ctx ends. When
// the store says the lease is lost, or no renewal succeeded for a whole
// lease (the database unreachable: another replica may have taken the job
// over by now), it closes lost and cancels the job.
func (d *Dispatcher) heartbeat(ctx context.Context, job *store.Job, cancel context.CancelFunc, lost chan<- struct{}, log *logrus.Entry) {
	err := loop.Lease{Length: d.Lease,
		Renew: func(ctx context.Context) error { return d.store.Heartbeat(ctx, job.ID, job.Owner) },
		Gone: func(err error) bool {
			return errors.Is(err, store.ErrLeaseLost) || errors.Is(err, store.ErrNotFound)
		},
		Retrying: func(err error) { log.WithError(err).Warn("renew a job's lease; trying again") },
		Now:      d.now,
	}.Keep(ctx)
	if err == nil {
		return
	}
	log.WithError(err).Error("job lease lost: stopping the job")
	close(lost)
	cancel()
}

func (d *Dispatcher) handle(ctx context.Context, job *store.Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v\n%s", p, debug.Stack())
		}
	}()
	h, ok := d.handlers[job.Event]
	if !ok {
		return fmt.Errorf("no handler for %q events", job.Event)
	}
	return h.Handle(ctx, job.Event, job.DeliveryID, job.Payload)
}

// Close stops taking jobs and waits for running ones up to ctx's deadline; jobs
// still running then are cancelled and handed back to the queue.
func (d *Dispatcher) Close(ctx context.Context) {
	d.once.Do(func() { close(d.stop) })
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if d.cancel != nil {
			d.cancel()
		}
		<-done
	}
	if d.cancel != nil {
		d.cancel()
	}
}

type jobIDKey struct{}

// withJobID marks ctx as the work of one queued job: check runs it starts
// record it, so a restart can tell whether the job will finish them.
func withJobID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, jobIDKey{}, id)
}

// JobID is the id of the queued job ctx works for, "" outside one.
func JobID(ctx context.Context) string {
	id, _ := ctx.Value(jobIDKey{}).(string)
	return id
}
