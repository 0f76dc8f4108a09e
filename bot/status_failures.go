package bot

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/shardgate/shardgate/bot/statuspage"
	"github.com/shardgate/shardgate/internal/reach"
	"github.com/shardgate/shardgate/store"
)

// ServiceGitHub is GitHub's name on the status page's services; a
// coordinator's is "coordinator <host>".
const ServiceGitHub = "GitHub"

// maxFailingJobs bounds the failing jobs the status page lists.
const maxFailingJobs = 50

// trackedCoordinatorHTTP is the coordinator client (coordHTTP, or a default
// one) with every request's end told to the reachability tracker.
func (s *Server) trackedCoordinatorHTTP() *http.Client {
	hc := &http.Client{}
	if s.coordHTTP != nil {
		c := *s.coordHTTP
		hc = &c
	}
	hc.Transport = s.reach.Transport("", func(r *http.Request) string { return "coordinator " + r.URL.Host }, hc.Transport)
	return hc
}

// failures is the status page's view of what fails: the store's failing
// jobs and this process's reachability tracker.
type failures struct {
	store store.Store
	reach *reach.Tracker
	now   func() time.Time
}

var _ statuspage.Failures = failures{}

// FailingJobs implements statuspage.Failures.
func (f failures) FailingJobs(ctx context.Context) ([]statuspage.FailingJob, error) {
	jobs, err := f.store.FailingJobs(ctx, f.now().Add(-statuspage.FailedJobsWindow), maxFailingJobs)
	if err != nil {
		return nil, err
	}
	out := make([]statuspage.FailingJob, 0, len(jobs))
	for _, j := range jobs {
		fj := statuspage.FailingJob{ID: j.ID, Event: j.Event, Retrying: j.State != store.JobFailed, Running: j.State == store.JobRunning,
			Attempt: j.Attempts, NextTry: j.NotBefore, Error: j.LastError, At: j.UpdatedAt}
		if ref, ok := jobPR(j.Payload); ok {
			fj.PR = ref
		}
		fj.Repo = jobRepo(j.Payload)
		out = append(out, fj)
	}
	return out, nil
}

// Reachability implements statuspage.Failures.
func (f failures) Reachability() []reach.Seen { return f.reach.All() }

// jobRepo is the "owner/name" a webhook payload names, "" when none.
func jobRepo(payload []byte) string {
	var p struct {
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	return p.Repository.FullName
}
