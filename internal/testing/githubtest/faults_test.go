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

func TestInjectFaults(t *testing.T) {
	comment := &github.IssueComment{Body: github.String("hello")}
	tests := []struct {
		name  string
		fault Fault
		// created is how many comments exist after the failed call.
		created int
		check   func(t *testing.T, err error)
	}{
		{"502 on every call, three times", Fault{Times: 3}, 0, func(t *testing.T, err error) {
			var er *github.ErrorResponse
			require.True(t, errors.As(err, &er), "%T %v", err, err)
			require.Equal(t, http.StatusBadGateway, er.Response.StatusCode)
		}},
		{"done, then the answer is lost", Fault{Method: "POST", Pattern: "/repos/{owner}/{repo}/issues/{issue_number}/comments", After: true, Times: 3}, 1, func(t *testing.T, err error) {
			var er *github.ErrorResponse
			require.True(t, errors.As(err, &er), "%T %v", err, err)
		}},
		{"connection reset", Fault{Reset: true, Times: 3}, 0, func(t *testing.T, err error) {
			var er *github.ErrorResponse
			require.False(t, errors.As(err, &er), "a reset is no HTTP answer: %v", err)
		}},
		{"reset after the work is done", Fault{Reset: true, After: true, Times: 3}, 1, func(t *testing.T, err error) {
			require.Error(t, err)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := New(t)
			_, pr := newRepoWithPR(t, gh)
			client := newClient(t, gh, DefaultInstallationID)
			gh.Inject(tt.fault)
			require.Equal(t, 3, gh.PendingFaults())
			for i := 0; i < 3; i++ {
				_, _, err := client.Issues.CreateComment(context.Background(), "acme", "infra", pr.Number, comment)
				tt.check(t, err)
				require.Len(t, gh.Comments("acme", "infra", pr.Number), tt.created*(i+1))
			}
			require.Zero(t, gh.PendingFaults())
			_, _, err := client.Issues.CreateComment(context.Background(), "acme", "infra", pr.Number, comment)
			require.NoError(t, err, "the fault fired its three times and no more")
			require.Len(t, gh.Comments("acme", "infra", pr.Number), tt.created*3+1)
		})
	}
}

func TestHangHoldsUntilTheClientGivesUp(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	gh.Inject(Fault{Method: "GET", Pattern: "/repos/{owner}/{repo}/pulls/{pull_number}", Hang: true})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := client.PullRequests.Get(ctx, "acme", "infra", pr.Number)
		done <- err
	}()
	require.Eventually(t, func() bool { return gh.PendingFaults() == 0 }, 5*time.Second, 5*time.Millisecond, "the request reached the fault")
	select {
	case err := <-done:
		t.Fatalf("a hanging call answered: %v", err)
	default:
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	// Released hangs answer with the fault's status; later calls are served.
	gh.Inject(Fault{Pattern: "/repos/{owner}/{repo}/pulls/{pull_number}", Hang: true, Status: 503})
	go func() {
		_, _, err := client.PullRequests.Get(context.Background(), "acme", "infra", pr.Number)
		done <- err
	}()
	require.Eventually(t, func() bool { return gh.PendingFaults() == 0 }, 5*time.Second, 5*time.Millisecond)
	gh.ReleaseHangs()
	var er *github.ErrorResponse
	require.ErrorAs(t, <-done, &er)
	require.Equal(t, 503, er.Response.StatusCode)
	_, _, err := client.PullRequests.Get(context.Background(), "acme", "infra", pr.Number)
	require.NoError(t, err)
}

func TestListCheckRunsForRefFilters(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()
	create := func(name, ext, status string) int64 {
		opts := github.CreateCheckRunOptions{Name: name, HeadSHA: pr.HeadSHA, ExternalID: github.String(ext), Status: github.String(status)}
		if status == "completed" {
			opts.Conclusion = github.String("success")
		}
		cr, _, err := client.Checks.CreateCheckRun(ctx, "acme", "infra", opts)
		require.NoError(t, err)
		return cr.GetID()
	}
	first := create("plan", "x/1", "completed")
	second := create("plan", "x/2", "in_progress")
	other := create("other", "y", "in_progress")

	list := func(opts *github.ListCheckRunsOptions) (ids []int64, exts []string) {
		res, _, err := client.Checks.ListCheckRunsForRef(ctx, "acme", "infra", pr.HeadSHA, opts)
		require.NoError(t, err)
		for _, cr := range res.CheckRuns {
			ids, exts = append(ids, cr.GetID()), append(exts, cr.GetExternalID())
		}
		return ids, exts
	}
	ids, exts := list(&github.ListCheckRunsOptions{CheckName: github.String("plan"), Filter: github.String("all")})
	require.Equal(t, []int64{second, first}, ids, "newest first")
	require.Equal(t, []string{"x/2", "x/1"}, exts, "external_id is stored and returned")
	ids, _ = list(&github.ListCheckRunsOptions{CheckName: github.String("plan")})
	require.Equal(t, []int64{second}, ids, "latest: the newest run of each name")
	ids, _ = list(&github.ListCheckRunsOptions{Status: github.String("in_progress"), Filter: github.String("all")})
	require.ElementsMatch(t, []int64{second, other}, ids)
	ids, _ = list(&github.ListCheckRunsOptions{AppID: github.Int64(gh.AppID()), Filter: github.String("all")})
	require.Len(t, ids, 3)
	ids, _ = list(&github.ListCheckRunsOptions{AppID: github.Int64(gh.AppID() + 1)})
	require.Empty(t, ids, "another App's runs")
}
