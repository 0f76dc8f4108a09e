package githubtest

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

func TestFailNext(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		pattern string
		status  int
		headers map[string]string
		check   func(t *testing.T, err error)
	}{
		{"secondary rate limit by template", "POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", 403, map[string]string{"Retry-After": RetryAfter(30 * time.Second)}, func(t *testing.T, err error) {
			var abuse *github.AbuseRateLimitError
			require.True(t, errors.As(err, &abuse), "%T %v", err, err)
			require.Equal(t, 30*time.Second, abuse.GetRetryAfter())
		}},
		{"too many requests by glob", "", "/repos/acme/*/issues/1/comments", 429, map[string]string{"Retry-After": "1"}, func(t *testing.T, err error) {
			var er *github.ErrorResponse
			require.True(t, errors.As(err, &er))
			require.Equal(t, http.StatusTooManyRequests, er.Response.StatusCode)
			require.Equal(t, "1", er.Response.Header.Get("Retry-After"))
		}},
		{"server error", "POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", 502, nil, func(t *testing.T, err error) {
			var er *github.ErrorResponse
			require.True(t, errors.As(err, &er))
			require.Equal(t, http.StatusBadGateway, er.Response.StatusCode)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := New(t)
			_, pr := newRepoWithPR(t, gh)
			gh.FailNext(tt.method, tt.pattern, tt.status, tt.headers)
			comment := &github.IssueComment{Body: github.String("hello")}

			_, _, err := newClient(t, gh, DefaultInstallationID).Issues.CreateComment(context.Background(), "acme", "infra", pr.Number, comment)
			require.Error(t, err)
			tt.check(t, err)
			require.Empty(t, gh.Comments("acme", "infra", pr.Number))

			// The fault fires once; a fresh client (go-github remembers a
			// secondary rate limit's retry-after) then succeeds.
			_, _, err = newClient(t, gh, DefaultInstallationID).Issues.CreateComment(context.Background(), "acme", "infra", pr.Number, comment)
			require.NoError(t, err)
			require.Len(t, gh.Comments("acme", "infra", pr.Number), 1)

			var statuses []int
			for _, r := range gh.Requests() {
				if r.Method == "POST" {
					statuses = append(statuses, r.Status)
					require.JSONEq(t, `{"body":"hello"}`, string(r.Body))
				}
			}
			require.Equal(t, []int{tt.status, 201}, statuses)
		})
	}
}

func TestFailNextOnlyMatchingRequests(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	gh.FailNext("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", 500, nil)

	_, _, err := client.PullRequests.Get(context.Background(), "acme", "infra", pr.Number)
	require.NoError(t, err)
	run, _, err := client.Checks.CreateCheckRun(context.Background(), "acme", "infra", github.CreateCheckRunOptions{Name: "n", HeadSHA: pr.HeadSHA})
	require.NoError(t, err)
	_, _, err = client.Checks.UpdateCheckRun(context.Background(), "acme", "infra", run.GetID(), github.UpdateCheckRunOptions{Name: "n", Status: github.String("in_progress")})
	require.Error(t, err)
	require.Equal(t, 1, gh.RequestCount("PATCH", "/repos/acme/infra/check-runs/*"))
}

func TestConcurrentClients(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers*3)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			_, _, err := client.Issues.CreateComment(ctx, "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("x")})
			errs <- err
			_, _, err = client.Checks.CreateCheckRun(ctx, "acme", "infra", github.CreateCheckRunOptions{Name: "n", HeadSHA: pr.HeadSHA})
			errs <- err
			_, _, err = client.Issues.AddLabelsToIssue(ctx, "acme", "infra", pr.Number, []string{"l"})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, gh.Comments("acme", "infra", pr.Number), workers)
	require.Len(t, gh.CheckRuns("acme", "infra"), workers)
	require.Equal(t, []string{"l"}, gh.Labels("acme", "infra", pr.Number))
	require.Len(t, gh.IssueEvents("acme", "infra", pr.Number), 1)
	require.Len(t, gh.Requests(), workers*3)
}
