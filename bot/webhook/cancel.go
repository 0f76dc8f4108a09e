package webhook

import (
	"context"
	"errors"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/store"
)

// CancelledError is the cause a job's context ends with when someone
// cancelled the job (`/shardgate cancel`, the API): the work stops as at
// shutdown (terraform gets SIGINT, then is killed after the runner's grace
// period), and the job is done, neither retried nor reported as failed.
type CancelledError struct {
	// By names who cancelled ("@login", or an API token's name).
	By string
}

func (e *CancelledError) Error() string { return "cancelled by " + e.By }

// Cancelled is the CancelledError ctx was cancelled with, nil when it was
// not cancelled by someone (still running, shut down, lease lost).
func Cancelled(ctx context.Context) *CancelledError {
	var c *CancelledError
	if errors.As(context.Cause(ctx), &c) {
		return c
	}
	return nil
}

// runningJobs are the jobs this dispatcher runs now, by id, with what
// cancels each.
type runningJobs struct {
	mu   sync.Mutex
	jobs map[string]context.CancelCauseFunc
}

func (r *runningJobs) add(id string, cancel context.CancelCauseFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobs == nil {
		r.jobs = map[string]context.CancelCauseFunc{}
	}
	r.jobs[id] = cancel
}

func (r *runningJobs) done(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.jobs, id)
}

// CancelRunning cancels the job id if one of this dispatcher's workers runs
// it, with a *CancelledError naming by as its context's cause, and says
// whether one did. It does not wait for the job to stop.
func (d *Dispatcher) CancelRunning(id, by string) bool {
	d.running.mu.Lock()
	defer d.running.mu.Unlock()
	cancel, ok := d.running.jobs[id]
	if ok {
		cancel(&CancelledError{By: by})
	}
	return ok
}

// recordCancelled finishes a job that someone cancelled and whose handler
// gave up with an error (a handler that stopped on its own terms returns
// nil, and is done as usual): done, since it ended as asked; never retried,
// nor listed or reported on its pull request as a failure. The log says who
// cancelled it.
func (d *Dispatcher) recordCancelled(ctx context.Context, job *store.Job, c *CancelledError, log *logrus.Entry) {
	ctx = context.WithoutCancel(ctx)
	if err := d.persist(log, func() error { return d.store.Complete(ctx, job.ID, job.Owner, nil) }); err != nil {
		log.WithError(err).Error("record a cancelled job")
		return
	}
	log.WithField("cancelled_by", c.By).Info("job cancelled; recorded as done")
}
