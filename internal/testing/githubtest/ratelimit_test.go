package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

type limitAnswer struct {
	status     int
	header     http.Header
	message    string
	retryAfter string
}

// send makes one request as the installation, bypassing any client-side
// knowledge of the limits.
func send(t *testing.T, gh *Server, method, path, body string) limitAnswer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(gh.URL(), "/")+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "token "+gh.InstallationToken(DefaultInstallationID))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var msg struct{ Message string }
	_ = json.NewDecoder(resp.Body).Decode(&msg)
	return limitAnswer{status: resp.StatusCode, header: resp.Header, message: msg.Message, retryAfter: resp.Header.Get("Retry-After")}
}

func TestRateLimitsAreOffByDefault(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	a := send(t, gh, http.MethodGet, fmt.Sprintf("/repos/acme/infra/pulls/%d", pr.Number), "")
	require.Equal(t, http.StatusOK, a.status)
	require.Empty(t, a.header.Get("X-Ratelimit-Limit"))
}

func TestPrimaryRateLimit(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 5, 0, 0, time.UTC))
	gh := New(t, WithClock(clock.Now), WithRateLimits(RateLimits{Primary: 3}))
	_, pr := newRepoWithPR(t, gh)
	path := fmt.Sprintf("/repos/acme/infra/pulls/%d", pr.Number)
	reset := strconv.FormatInt(clock.Now().Add(time.Hour).Unix(), 10)
	for i := 1; i <= 3; i++ {
		a := send(t, gh, http.MethodGet, path, "")
		require.Equal(t, http.StatusOK, a.status)
		require.Equal(t, "3", a.header.Get("X-Ratelimit-Limit"))
		require.Equal(t, strconv.Itoa(3-i), a.header.Get("X-Ratelimit-Remaining"))
		require.Equal(t, strconv.Itoa(i), a.header.Get("X-Ratelimit-Used"))
		require.Equal(t, reset, a.header.Get("X-Ratelimit-Reset"))
		require.Equal(t, "core", a.header.Get("X-Ratelimit-Resource"))
	}
	a := send(t, gh, http.MethodGet, path, "")
	require.Equal(t, http.StatusForbidden, a.status)
	require.Equal(t, "0", a.header.Get("X-Ratelimit-Remaining"))
	require.Equal(t, "API rate limit exceeded for installation ID 1.", a.message)
	reqs := gh.Requests()
	require.Equal(t, "primary", reqs[len(reqs)-1].Limited)
	require.Equal(t, "", reqs[len(reqs)-2].Limited)
	// The log keeps the budget each request arrived at, and its window.
	for i, left := range []int{3, 2, 1, 0} {
		r := reqs[len(reqs)-4+i]
		require.True(t, r.Budgeted)
		require.Equal(t, left, r.Remaining)
		require.Equal(t, clock.Now().Add(time.Hour), r.Reset)
		require.False(t, r.InRetryAfter)
	}

	clock.Advance(time.Hour)
	a = send(t, gh, http.MethodGet, path, "")
	require.Equal(t, http.StatusOK, a.status, "a new budget at the reset")
	require.Equal(t, "2", a.header.Get("X-Ratelimit-Remaining"))
}

func TestSecondaryRateLimitOnContentCreation(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 5, 0, 0, time.UTC))
	gh := New(t, WithClock(clock.Now), WithRateLimits(RateLimits{Content: 2, RetryAfter: 30 * time.Second}))
	_, pr := newRepoWithPR(t, gh)
	comments := fmt.Sprintf("/repos/acme/infra/issues/%d/comments", pr.Number)
	for i := 0; i < 2; i++ {
		require.Equal(t, http.StatusCreated, send(t, gh, http.MethodPost, comments, `{"body":"hi"}`).status)
	}
	a := send(t, gh, http.MethodPost, comments, `{"body":"hi"}`)
	require.Equal(t, http.StatusForbidden, a.status)
	require.Equal(t, "30", a.retryAfter)
	require.Contains(t, a.message, "secondary rate limit")
	require.Len(t, gh.Comments("acme", "infra", pr.Number), 2, "the refused comment was not made")
	clock.Advance(10 * time.Second)
	a = send(t, gh, http.MethodGet, comments, "")
	require.Equal(t, http.StatusForbidden, a.status, "every request waits for Retry-After")
	require.Equal(t, "20", a.retryAfter)
	reqs := gh.Requests()
	require.False(t, reqs[len(reqs)-2].InRetryAfter, "the request that met the limit")
	require.True(t, reqs[len(reqs)-1].InRetryAfter, "sent while Retry-After held")
	require.False(t, reqs[len(reqs)-1].Budgeted, "no primary limit set")
	clock.Advance(20 * time.Second)
	require.Equal(t, http.StatusOK, send(t, gh, http.MethodGet, comments, "").status)
	clock.Advance(time.Minute)
	require.Equal(t, http.StatusCreated, send(t, gh, http.MethodPost, comments, `{"body":"hi"}`).status)
}
