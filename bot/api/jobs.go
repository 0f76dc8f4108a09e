package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/store"
)

// job is a webhook job as the API shows it.
type job struct {
	ID string `json:"id"`
	// Kind is what the job does: the GitHub event it handles
	// ("pull_request", "issue_comment", ...) or shardgate's own.
	Kind        string     `json:"kind"`
	Repository  string     `json:"repository,omitempty"`
	PullRequest int        `json:"pull_request,omitempty"`
	Project     string     `json:"project,omitempty"`
	State       string     `json:"state"`
	Attempts    int        `json:"attempts"`
	LastError   string     `json:"last_error,omitempty"`
	NextTry     *time.Time `json:"next_try,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

func (h *Handler) view(j *store.Job) job {
	s := h.o.Describe(j)
	kind := j.Event
	if kind == "" {
		kind = j.Kind
	}
	v := job{ID: j.ID, Kind: kind, Repository: s.Repository, PullRequest: s.PullRequest, Project: s.Project,
		State: string(j.State), Attempts: j.Attempts, LastError: j.LastError, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt}
	if j.State == store.JobQueued && !j.NotBefore.IsZero() {
		t := j.NotBefore
		v.NextTry = &t
	}
	return v
}

// listedStates are the states GET /jobs lists.
var listedStates = map[string]store.JobState{"queued": store.JobQueued, "running": store.JobRunning, "failed": store.JobFailed}

// jobs answers GET /api/v1/jobs?state=queued|running|failed, by id.
func (h *Handler) jobs(w http.ResponseWriter, r *http.Request) (int, any, error) {
	state, ok := listedStates[r.URL.Query().Get("state")]
	if !ok {
		return 0, nil, fail(http.StatusBadRequest, "state must be queued, running or failed")
	}
	limit, after, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	list, err := h.o.Jobs.JobsByState(r.Context(), state, after, limit+1)
	if err != nil {
		return 0, nil, err
	}
	more := len(list) > limit
	list = list[:min(limit, len(list))]
	p := page[job]{}
	for _, j := range list {
		p.Items = append(p.Items, h.view(j))
	}
	last := ""
	if len(list) > 0 {
		last = list[len(list)-1].ID
	}
	finish(w, r, &p, more, last)
	return http.StatusOK, p, nil
}

// getJob is the job of the path's id, or 404.
func (h *Handler) getJob(r *http.Request) (*store.Job, error) {
	id := r.PathValue("id")
	j, err := h.o.Jobs.GetJob(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fail(http.StatusNotFound, "no job "+id)
	}
	return j, err
}

// retry answers POST /api/v1/jobs/{id}/retry: a failed job queued again.
func (h *Handler) retry(w http.ResponseWriter, r *http.Request) (int, any, error) {
	j, err := h.getJob(r)
	if err != nil {
		return 0, nil, err
	}
	if j.State != store.JobFailed {
		return 0, nil, fail(http.StatusConflict, "job "+j.ID+" is "+string(j.State)+": only a failed job is retried")
	}
	got, err := h.o.Jobs.RequeueFailed(r.Context(), j.ID)
	if errors.Is(err, store.ErrNotQueued) {
		return 0, nil, fail(http.StatusConflict, "job "+j.ID+" is no longer failed: only a failed job is retried")
	}
	if err != nil {
		return 0, nil, err
	}
	got.Payload = j.Payload
	h.o.Log.WithFields(logrus.Fields{"api_token": tokenOf(r.Context()).Name, "job_id": j.ID}).Info("api: failed job queued again")
	return http.StatusOK, h.view(got), nil
}
