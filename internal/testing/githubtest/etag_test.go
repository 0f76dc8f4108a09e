package githubtest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

// get sends a GET as the installation with an optional If-None-Match.
func get(t *testing.T, gh *Server, path, ifNoneMatch string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(gh.URL(), "/")+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "token "+gh.InstallationToken(DefaultInstallationID))
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// TestConditionalRequests: every JSON answer to a GET carries a strong ETag
// of its body; a matching If-None-Match (strong, weak or in a list) gets 304
// with no body, which costs no primary budget and is logged; a changed
// resource gets 200 and a new ETag.
func TestConditionalRequests(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 5, 0, 0, time.UTC))
	gh := New(t, WithClock(clock.Now), WithRateLimits(RateLimits{Primary: 10}))
	_, pr := newRepoWithPR(t, gh)
	path := fmt.Sprintf("/repos/acme/infra/issues/%d/comments", pr.Number)
	gh.AddComment("acme", "infra", pr.Number, "bob", "/shardgate plan")

	first, body := get(t, gh, path, "")
	require.Equal(t, http.StatusOK, first.StatusCode)
	etag := first.Header.Get("ETag")
	require.Regexp(t, `^"[0-9a-f]{64}"$`, etag)
	require.Equal(t, "9", first.Header.Get("X-Ratelimit-Remaining"))
	again, _ := get(t, gh, path, "")
	require.Equal(t, etag, again.Header.Get("ETag"), "the same body has the same ETag")

	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		resp, b := get(t, gh, path, inm)
		require.Equal(t, http.StatusNotModified, resp.StatusCode, inm)
		require.Empty(t, b)
		require.Equal(t, etag, resp.Header.Get("ETag"))
		require.Equal(t, "8", resp.Header.Get("X-Ratelimit-Remaining"), "a 304 costs no budget")
		require.Equal(t, "2", resp.Header.Get("X-Ratelimit-Used"))
	}
	resp, _ := get(t, gh, path, `"other"`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "7", resp.Header.Get("X-Ratelimit-Remaining"))

	gh.AddComment("acme", "infra", pr.Number, "carol", "/shardgate apply")
	changed, changedBody := get(t, gh, path, etag)
	require.Equal(t, http.StatusOK, changed.StatusCode, "a changed resource is sent again")
	require.NotEqual(t, etag, changed.Header.Get("ETag"))
	require.NotEqual(t, body, changedBody)

	var notModified int
	for _, r := range gh.Requests() {
		if r.Status == http.StatusNotModified {
			notModified++
			require.Equal(t, DefaultInstallationID, r.InstallationID)
		}
	}
	require.Equal(t, 4, notModified, "the log has the 304s")
}

// TestNotModifiedOnlyForGET: a write with If-None-Match is done as always.
func TestNotModifiedOnlyForGET(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%srepos/acme/infra/issues/%d/comments", gh.URL(), pr.Number),
		strings.NewReader(`{"body":"hi"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "token "+gh.InstallationToken(DefaultInstallationID))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("If-None-Match", "*")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Empty(t, resp.Header.Get("ETag"))
}

// TestPullRequestETagHoldsUntilItChanges: a pull request's answer, its
// updated_at included, stays the same while nothing changes it (as on
// GitHub), so a later conditional read is a 304; a change moves updated_at.
func TestPullRequestETagHoldsUntilItChanges(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 5, 0, 0, time.UTC))
	gh := New(t, WithClock(clock.Now))
	t0 := clock.Now()
	stamp := func(d time.Duration) string { return t0.Add(d).Format("2006-01-02T15:04:05Z") }
	_, pr := newRepoWithPR(t, gh)
	path := fmt.Sprintf("/repos/acme/infra/pulls/%d", pr.Number)
	first, _ := get(t, gh, path, "")
	clock.Advance(time.Minute)
	again, _ := get(t, gh, path, first.Header.Get("ETag"))
	require.Equal(t, http.StatusNotModified, again.StatusCode)

	clock.Advance(time.Minute)
	gh.AddLabel("acme", "infra", pr.Number, "shardgate/plan-ok", "bob")
	changed, body := get(t, gh, path, first.Header.Get("ETag"))
	require.Equal(t, http.StatusOK, changed.StatusCode)
	require.Contains(t, string(body), `"updated_at":"`+stamp(2*time.Minute)+`"`)
	clock.Advance(time.Minute)
	gh.ClosePR("acme", "infra", pr.Number, false)
	clock.Advance(time.Minute)
	_, body = get(t, gh, path, "")
	require.Contains(t, string(body), `"closed_at":"`+stamp(3*time.Minute)+`"`)
	require.Contains(t, string(body), `"updated_at":"`+stamp(3*time.Minute)+`"`)
}
