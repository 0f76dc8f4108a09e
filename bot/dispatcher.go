package bot

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/store"
)

// DefaultPollInterval is how often idle workers look for jobs they were not told about.
const DefaultPollInterval = time.Second

// Dispatcher runs queued jobs on a fixed number of workers. Each job gets a fresh
// context carrying only the logger; a panic becomes a failed job with its stack.
type Dispatcher struct {
	store    store.Store
	handlers map[string]EventHandler
	workers  int
	owner    string
	log      *logrus.Entry
	poll     time.Duration

	// observe records each job's outcome and duration (metrics); may be nil.
	observe func(event string, err error, d time.Duration)
	// attempts bounds the tries of a job failing on transient errors; the
	// pause between tries grows from retryBase to retryMax.
	attempts            int
	retryBase, retryMax time.Duration
	// failed reports a job that failed for good (on its PR); may be nil.
	failed func(ctx context.Context, job *store.Job, err error)

	wake   chan struct{}
	stop   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// NewDispatcher builds a dispatcher; owner names this process in job records.
func NewDispatcher(st store.Store, handlers []EventHandler, workers int, owner string, log *logrus.Entry) (*Dispatcher, error) {
	d := &Dispatcher{store: st, handlers: map[string]EventHandler{}, workers: workers, owner: owner, log: log,
		poll: DefaultPollInterval, wake: make(chan struct{}, 1), stop: make(chan struct{}),
		attempts: DefaultJobAttempts, retryBase: DefaultJobRetryBase, retryMax: DefaultJobRetryMaxWait}
	if workers < 1 {
		return nil, fmt.Errorf("new dispatcher: workers must be at least 1, got %d", workers)
	}
	for _, h := range handlers {
		for _, e := range h.Handles() {
			if _, dup := d.handlers[e]; dup {
				return nil, fmt.Errorf("new dispatcher: two handlers for %q events", e)
			}
			d.handlers[e] = h
		}
	}
	return d, nil
}

// Events lists the event types that have a handler.
func (d *Dispatcher) Events() []string {
	out := make([]string, 0, len(d.handlers))
	for e := range d.handlers {
		out = append(out, e)
	}
	return out
}

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
		go d.work(workCtx)
	}
	d.Notify()
	return nil
}

func (d *Dispatcher) work(ctx context.Context) {
	defer d.wg.Done()
	for {
		select {
		case <-d.stop:
			return
		default:
		}
		job, err := d.store.Claim(ctx, d.owner)
		if err != nil {
			d.log.WithError(err).Error("claim a job")
		}
		if job == nil {
			select {
			case <-d.stop:
				return
			case <-d.wake:
			case <-time.After(d.poll):
			}
			continue
		}
		// Another worker may find more work while this one runs.
		d.Notify()
		d.run(ctx, job)
	}
}

// run handles one job and records the outcome. A job whose context was
// cancelled by Close is handed back to the queue, not failed.
func (d *Dispatcher) run(ctx context.Context, job *store.Job) {
	log := d.log.WithFields(logrus.Fields{FieldJob: job.ID, FieldDelivery: job.DeliveryID, FieldEvent: job.Event})
	jobCtx := WithLogger(withJobID(ctx, job.ID), log)
	start := time.Now()
	err := d.handle(jobCtx, job)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		if rerr := d.store.Release(context.WithoutCancel(ctx), job.ID); rerr != nil {
			log.WithError(rerr).Error("hand back an interrupted job")
		}
		log.Warn("job interrupted by shutdown; handed back to the queue")
		return
	}
	if d.observe != nil {
		d.observe(job.Event, err, time.Since(start))
	}
	log = log.WithField("duration_ms", time.Since(start).Milliseconds())
	if err != nil && transient(err) && job.Attempts < d.attempts {
		wait := jobBackoff(job.Attempts, d.retryBase, d.retryMax)
		rerr := d.store.Retry(context.WithoutCancel(ctx), job.ID, err, time.Now().Add(wait))
		if rerr == nil {
			log.WithError(err).WithFields(logrus.Fields{"attempt": job.Attempts, "retry_in_ms": wait.Milliseconds()}).
				Warn("job failed on a transient error; it will be retried")
			return
		}
		log.WithError(rerr).Error("hand a job back for a retry")
	}
	if cerr := d.store.Complete(context.WithoutCancel(ctx), job.ID, err); cerr != nil {
		log.WithError(cerr).Error("record a job's outcome")
	}
	if err != nil {
		log.WithError(err).WithField("attempt", job.Attempts).Error("job failed")
		if d.failed != nil {
			d.failed(WithLogger(context.WithoutCancel(ctx), log), job, err)
		}
		return
	}
	log.Info("job done")
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

// jobIDOf is the id of the queued job ctx works for, "" outside one.
func jobIDOf(ctx context.Context) string {
	id, _ := ctx.Value(jobIDKey{}).(string)
	return id
}
