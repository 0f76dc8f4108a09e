package statuspage

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/reach"
	"github.com/shardgate/shardgate/internal/redact"
)

// fakeFailures is a Failures of fixed jobs and services.
type fakeFailures struct {
	jobs  []FailingJob
	err   error
	seen  []reach.Seen
	calls int
}

func (f *fakeFailures) FailingJobs(context.Context) ([]FailingJob, error) {
	f.calls++
	return f.jobs, f.err
}
func (f *fakeFailures) Reachability() []reach.Seen { return f.seen }

// The page says what fails: a banner, the failing and retrying jobs with
// their attempt, next try and error (redacted, escaped), the services as
// last seen, and a drift check that failed for a whole repository.
func TestFailuresAreShown(t *testing.T) {
	const secret = "ghs_installationtoken0123456789"
	now := fakeclock.Date(2026, 12, 2, 9, 30, 0) // where newScene's clock stands
	f := &fakeFailures{
		jobs: []FailingJob{
			{ID: "7", Event: "pull_request", PR: refOf(12), Repo: "acme/streams", Retrying: true, Attempt: 3, NextTry: now.Add(40 * time.Second),
				Error: "get pull request acme/streams#12: GET /repos/acme/streams/pulls/12: 500 " + hostile("job-error") + "\nstack line", At: now.Add(-time.Second)},
			{ID: "5", Event: "issue_comment", Repo: "acme/streams", Attempt: 8, Error: "token " + secret + " refused", At: now.Add(-10 * time.Minute)},
		},
		seen: []reach.Seen{
			{Service: "GitHub", OK: false, At: now.Add(-time.Second), Since: now.Add(-5 * time.Minute), Error: "answered 500 Internal Server Error"},
			{Service: "coordinator coord:8080", OK: true, At: now.Add(-time.Minute), Since: now.Add(-time.Hour)},
		},
	}
	drift := fakeDrift{rows: []DriftRow{{Repo: "acme/streams", Status: "error: drift check of acme/streams: read the head of main: 500", CheckedAt: now}}}
	s := newScene(t, "bolt", Options{Failures: f, Drift: drift, Redactor: redact.New(secret)})
	resp, body := get(t, s.srv.URL+"/", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)

	require.Contains(t, body, `<div class="banner" role="alert"><strong>Something is failing:</strong>`)
	for _, want := range []string{
		"1 webhook job failing and to be tried again",
		"1 webhook job failed for good in the last hour",
		"GitHub unreachable since " + pageTime(now.Add(-5*time.Minute)) + " (answered 500 Internal Server Error)",
		"1 drift check failed (see Drift)",
		// The retrying job: its PR, attempt, next try and first error line.
		`<td>job 7</td><td><code>pull_request</code></td><td><a href="https://github.com/acme/streams/pull/12" rel="noreferrer">acme/streams#12</a></td>`,
		`<span class="state wait">retrying</span></td><td>3</td><td>` + pageTime(now.Add(40*time.Second)) + `</td>`,
		template.HTMLEscapeString(hostile("job-error")),
		// The failed one, about a repository, its secret redacted.
		`<td>job 5</td><td><code>issue_comment</code></td><td>acme/streams</td>`,
		`<span class="state failed">failed</span></td><td>8</td><td></td>`,
		// The services.
		`<td>GitHub</td><td><span class="state failed">unreachable</span></td><td>` + pageTime(now.Add(-5*time.Minute)) + `</td>`,
		`<td>coordinator coord:8080</td><td><span class="state applied">reachable</span></td>`,
		// The drift check that failed for the repository.
		"every project (the check failed for the repository)",
		"error: drift check of acme/streams: read the head of main: 500",
	} {
		require.Contains(t, body, want)
	}
	require.NotContains(t, body, "stack line", "one line of the error")
	require.NotContains(t, body, secret)
	require.NotContains(t, body, "<script>alert")

	// Nothing failing: no banner, and the sections say so.
	f.jobs, f.seen = nil, []reach.Seen{{Service: "GitHub", OK: true, At: now, Since: now}}
	s = newScene(t, "bolt", Options{Failures: f})
	_, body = get(t, s.srv.URL+"/", "")
	require.NotContains(t, body, `class="banner"`)
	require.Contains(t, body, "No webhook job is failing, and none failed in the last 24 hours.")

	// A store that cannot list the failing jobs is a problem named on the page.
	f.err = errors.New("store unreachable")
	_, body = get(t, s.srv.URL+"/", "")
	require.Contains(t, body, "read the failing jobs: store unreachable")
}
