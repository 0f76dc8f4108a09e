package statuspage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/reach"
)

// Failures tells what is failing: the webhook jobs that failed or wait to be
// tried again, and how the last request to each service ended.
type Failures interface {
	FailingJobs(ctx context.Context) ([]FailingJob, error)
	Reachability() []reach.Seen
}

// FailingJob is a webhook job that failed: for good, or on a transient
// error and so to be tried again.
type FailingJob struct {
	ID    string
	Event string
	// PR is the pull request the job is about; zero when it is about none.
	PR pullreq.Ref
	// Repo is "owner/name" when the payload names one.
	Repo string
	// Retrying is true while the job is to be tried again (waiting for its
	// next try, or running it); false once it failed for good.
	Retrying bool
	Running  bool
	Attempt  int
	// NextTry is when a retrying job may run again.
	NextTry time.Time
	// Error is why its last attempt failed.
	Error string
	// At is when that attempt ended (or the retry started).
	At time.Time
}

// FailedJobsWindow is how far back the page lists jobs that failed for
// good; BannerWindow how recent such a failure keeps the banner up.
const (
	FailedJobsWindow = 24 * time.Hour
	BannerWindow     = time.Hour
)

type failingView struct {
	Job     string
	Event   string
	About   link
	State   string // retrying, retry running, failed
	Attempt int
	NextTry string
	Error   string
	At      string
}

type reachView struct {
	Service string
	OK      bool
	State   string
	Last    string
	Since   string
	Error   string
}

// failures fills the failing jobs, the services and the banner of v; drift
// must be built already.
func (h *Handler) failures(ctx context.Context, v *overview, problem func(string, error)) {
	if h.o.Failures == nil {
		return
	}
	now := h.o.Now()
	var banner []string
	jobs, err := h.o.Failures.FailingJobs(ctx)
	if err != nil {
		problem("read the failing jobs", err)
	}
	retrying, failed := 0, 0
	for _, j := range jobs {
		fv := failingView{Job: jobName(j.ID), Event: j.Event, Attempt: j.Attempt, Error: firstLine(j.Error), At: stamp(j.At)}
		switch {
		case j.PR.Number > 0:
			fv.About = h.prLink(j.PR)
		default:
			fv.About = link{Text: j.Repo}
		}
		switch {
		case j.Retrying && j.Running:
			fv.State, retrying = "retry running", retrying+1
		case j.Retrying:
			fv.State, fv.NextTry, retrying = "retrying", stamp(j.NextTry), retrying+1
		default:
			fv.State = "failed"
			if now.Sub(j.At) <= BannerWindow {
				failed++
			}
		}
		v.Failing = append(v.Failing, fv)
	}
	if retrying > 0 {
		banner = append(banner, plural(retrying, "webhook job")+" failing and to be tried again")
	}
	if failed > 0 {
		banner = append(banner, plural(failed, "webhook job")+" failed for good in the last hour")
	}
	for _, s := range h.o.Failures.Reachability() {
		rv := reachView{Service: s.Service, OK: s.OK, State: "reachable", Last: stamp(s.At), Since: stamp(s.Since), Error: firstLine(s.Error)}
		if !s.OK {
			rv.State = "unreachable"
			banner = append(banner, fmt.Sprintf("%s unreachable since %s (%s)", s.Service, stamp(s.Since), rv.Error))
		}
		v.Reach = append(v.Reach, rv)
	}
	drifts := 0
	for _, d := range v.Drift {
		if strings.HasPrefix(d.Status, "error") {
			drifts++
		}
	}
	if drifts > 0 {
		banner = append(banner, plural(drifts, "drift check")+" failed (see Drift)")
	}
	v.Banner = banner
}

// jobName is how the page names a webhook job: by its number.
func jobName(id string) string {
	if n, err := strconv.ParseUint(id, 10, 64); err == nil {
		return "job " + strconv.FormatUint(n, 10)
	}
	return "job " + id
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// firstLine is the first line of s: a stack or terraform's output stays in
// the logs.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
