package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/store"
)

// JobCanceller cancels a running job: the worker running it stops it (a
// running terraform gets SIGINT, then is killed after a grace period) and
// reports it cancelled. by names who asked ("api token ci"). It answers a
// *Refusal when this job cannot be cancelled.
type JobCanceller interface {
	CancelJob(ctx context.Context, id, by string) error
}

// Refusal is a canceller's no, with why; the API answers 409 with the
// reason.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return "cannot cancel: " + r.Reason }

// RefuseRunning is the canceller of a server that cannot stop a running job:
// it refuses every one, saying so.
type RefuseRunning struct{}

// CancelJob implements JobCanceller.
func (RefuseRunning) CancelJob(context.Context, string, string) error {
	return &Refusal{Reason: "this server cannot stop a running job: wait for it to end"}
}

// cancel answers POST /api/v1/jobs/{id}/cancel: a queued job ends without
// running; a running one is stopped by the canceller. A job that applies is
// never cancelled: an apply cut short leaves a half-applied change, which
// is worse than one that finishes.
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) (int, any, error) {
	j, err := h.getJob(r)
	if err != nil {
		return 0, nil, err
	}
	by := "api token " + tokenOf(r.Context()).Name
	log := h.o.Log.WithFields(logrus.Fields{"api_token": tokenOf(r.Context()).Name, "job_id": j.ID})
	if h.o.Describe(j).Applies {
		return 0, nil, fail(http.StatusConflict, "job "+j.ID+" applies a change: applies are not cancellable (a half-applied change is worse than a finished one)")
	}
	switch j.State {
	case store.JobQueued:
		got, err := h.o.Jobs.CancelQueued(r.Context(), j.ID, "by "+by)
		if errors.Is(err, store.ErrNotQueued) {
			return 0, nil, fail(http.StatusConflict, "job "+j.ID+" started meanwhile: ask again to cancel it running")
		}
		if err != nil {
			return 0, nil, err
		}
		got.Payload = j.Payload
		log.Info("api: queued job cancelled")
		return http.StatusOK, h.view(got), nil
	case store.JobRunning:
		err := h.o.Canceller.CancelJob(r.Context(), j.ID, by)
		var no *Refusal
		if errors.As(err, &no) {
			return 0, nil, fail(http.StatusConflict, "job "+j.ID+" is running: "+no.Reason)
		}
		if err != nil {
			return 0, nil, err
		}
		log.Info("api: running job cancelled")
		now, err := h.o.Jobs.GetJob(r.Context(), j.ID)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, h.view(now), nil
	}
	return 0, nil, fail(http.StatusConflict, "job "+j.ID+" is "+string(j.State)+": it ended already")
}
