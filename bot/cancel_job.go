package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardgate/shardgate/bot/api"
	"github.com/shardgate/shardgate/store"
)

// Errors of CancelJob for jobs it does not stop.
var (
	// ErrJobFinished: the job is done or failed; nothing to cancel.
	ErrJobFinished = errors.New("the job has finished")
	// ErrQueuedCancelUnsupported: the job is queued and the store cannot
	// cancel a queued job (store.JobAdmin).
	ErrQueuedCancelUnsupported = errors.New("the store cannot cancel a queued job")
)

// JobElsewhereError: the job runs in another replica, which alone can
// stop it; cancel it there (its status page's replica) or wait for it.
type JobElsewhereError struct{ Owner string }

func (e *JobElsewhereError) Error() string {
	return fmt.Sprintf("the job runs in another replica (%s), which alone can stop it", e.Owner)
}

// CancelJob cancels the queued job id (webhook delivery, scheduled work)
// for by (an API token's name, "@login"): a job this process runs stops at
// once: its context ends with a *webhook.CancelledError, so a terraform it
// runs gets SIGINT (and releases its state lock itself) and is killed after
// the runner's grace period, its whole process tree with it (cgroup or PID
// namespace); a plan's check runs then conclude cancelled and its comment
// says who cancelled. A queued job is cancelled in the store
// (store.JobAdmin's CancelQueued). It does not wait for the job to stop. Errors:
// store.ErrNotFound for an unknown id, ErrJobFinished, *JobElsewhereError,
// ErrQueuedCancelUnsupported. Applies are the apply queue's, not jobs here.
func (s *Server) CancelJob(ctx context.Context, id, by string) error {
	if s.dispatcher != nil && s.dispatcher.CancelRunning(id, by) {
		s.log.WithFields(map[string]any{"job": id, "cancelled_by": by}).Info("running job cancelled")
		return nil
	}
	job, err := s.store.GetJob(ctx, id)
	if err != nil {
		return fmt.Errorf("cancel job %s: %w", id, err)
	}
	switch job.State {
	case store.JobQueued:
		qc, ok := s.store.(store.JobAdmin)
		if !ok {
			return ErrQueuedCancelUnsupported
		}
		if _, err := qc.CancelQueued(ctx, id, "by "+by); err != nil {
			return fmt.Errorf("cancel job %s: %w", id, err)
		}
		return nil
	case store.JobRunning:
		if s.dispatcher != nil && s.dispatcher.CancelRunning(id, by) {
			return nil // claimed here since the first look
		}
		return &JobElsewhereError{Owner: job.Owner}
	}
	return ErrJobFinished
}

// apiCanceller is the automation API's canceller of running jobs: the
// Server's CancelJob, its answers for jobs it cannot stop given as the
// API's refusals (409 with the reason).
type apiCanceller struct{ s *Server }

// CancelJob implements api.JobCanceller.
func (c apiCanceller) CancelJob(ctx context.Context, id, by string) error {
	err := c.s.CancelJob(ctx, id, by)
	var elsewhere *JobElsewhereError
	switch {
	case errors.As(err, &elsewhere):
		return &api.Refusal{Reason: elsewhere.Error()}
	case errors.Is(err, ErrJobFinished):
		return &api.Refusal{Reason: "it ended meanwhile"}
	}
	return err
}
