package bot

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
)

// storm delivers n "/shardgate help" comments on pr at once, without waiting
// for their jobs, and returns the job ids. Each comes from another user with
// write access: identical commands of one author are coalesced into one run
// (TestAHelpStormGetsOneReplyAndStarvesNoOtherRepository), and these storms
// are about GitHub's limits, met by one run per comment.
func (h *harness) storm(pr githubtest.PullRequest, n int) []string {
	h.t.Helper()
	return h.stormBy(pr, n, func(i int) string {
		user := fmt.Sprintf("storm-user-%d", i)
		h.gh.SetPermission(owner, repoName, user, "write")
		return user
	})
}

// stormBy is storm with the comments' authors chosen by user.
func (h *harness) stormBy(pr githubtest.PullRequest, n int, user func(i int) string) []string {
	h.t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		login := user(i)
		c := h.gh.AddComment(owner, repoName, pr.Number, login, "/shardgate help")
		code, r := h.deliver("issue_comment", githubtest.IssueCommentOnPR(h.t, githubtest.CommentPayload{
			InstallationID: 1, Owner: owner, Repo: repoName, RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number,
			Author: author, CommentID: c.ID, Body: c.Body, User: login}))
		require.Equal(h.t, 202, code, r.Reason)
		ids = append(ids, r.JobID)
	}
	return ids
}

// waitJobs waits until every job finished and requires each done.
func (h *harness) waitJobs(ids []string, within time.Duration) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		for _, id := range ids {
			j, err := h.st.GetJob(context.Background(), id)
			if err != nil || (j.State != store.JobDone && j.State != store.JobFailed) {
				return false
			}
		}
		return true
	}, within, 50*time.Millisecond)
	for _, id := range ids {
		j, err := h.st.GetJob(context.Background(), id)
		require.NoError(h.t, err)
		require.Equal(h.t, store.JobDone, j.State, "job %s: %s", id, j.LastError)
	}
}

// refusedForALimit counts the requests GitHub refused for a rate limit:
// shardgate sent them while it knew the budget was spent (the fake's clock
// and shardgate's are one, so a request learning a reset is not refused).
func refusedForALimit(t *testing.T, gh *githubtest.Server) (refused int) {
	t.Helper()
	for _, r := range gh.Requests() {
		if r.Limited != "" {
			refused++
			t.Logf("refused for the %s limit: %s %s", r.Limited, r.Method, r.Path)
		}
	}
	return refused
}

// stormScene opens a pull request, sets the fake GitHub's limits low and
// storms the pull request with n help comments: each gets its reply, no job
// fails or spends an attempt on a limit, and the limit was met.
func stormScene(t *testing.T, limits githubtest.RateLimits, n int, limit string) (*harness, githubtest.PullRequest) {
	if testing.Short() {
		t.Skip("terraform")
	}
	h := newHarness(t)
	pr := h.openPR("storm", map[string]int{"create-order/billing": 4, "create-order/audit": 4, "payments/ledger": 2})
	h.gh.SetRateLimits(limits)
	ids := h.storm(pr, n)
	h.waitJobs(ids, 3*time.Minute)
	for _, id := range ids {
		j, err := h.st.GetJob(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, 1, j.Attempts, "job %s: a wait for GitHub is not a failed attempt", id)
	}
	replies := 0
	for _, c := range h.gh.Comments(owner, repoName, pr.Number) {
		if c.User == h.gh.BotLogin() && strings.Contains(c.Body, "/shardgate plan") {
			replies++
		}
	}
	require.Equal(t, n, replies, "every comment got its reply")
	require.True(t, strings.Contains(h.logs.String(), `"limit":"github `+limit+` rate limit"`), "the storm met the %s limit", limit)
	return h, pr
}

func TestACommentStormWaitsForGitHubsPrimaryLimitAndLosesNoJob(t *testing.T) {
	h, pr := stormScene(t, githubtest.RateLimits{Primary: 30, Window: 2 * time.Second}, 40, "primary")
	require.Zero(t, refusedForALimit(t, h.gh), "no request sent while the budget was 0")

	// The waiting jobs tried to say so on the pull request's comment; with
	// the budget spent, the edit was not even sent (counted above), and the
	// comment shows the pull request's status, not a wait.
	require.True(t, strings.Contains(h.logs.String(), "the wait for GitHub's limit is not shown: GitHub refuses the edit too"), "a wait tried the comment")
	require.NotRegexp(t, waitNotice, h.theComment(pr))
	st, err := h.srv.rec.PR(context.Background(), h.ref(pr))
	require.NoError(t, err)
	require.False(t, st.LimitShown)

	// The budget is on /metrics and the status page, per installation.
	metricsText := h.scrape()
	require.Contains(t, metricsText, `shardgate_github_rate_limit_limit{installation="1"} 30`)
	require.Contains(t, metricsText, `shardgate_github_rate_limit_remaining{installation="1"}`)
	page := httptest.NewRecorder()
	h.srv.StatusHandler().ServeHTTP(page, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Contains(t, page.Body.String(), " of 30</td>")
}

func TestACommentStormWaitsForGitHubsSecondaryLimitAndLosesNoJob(t *testing.T) {
	h, _ := stormScene(t, githubtest.RateLimits{Content: 10, ContentWindow: 2 * time.Second, RetryAfter: time.Second}, 30, "secondary")
	// A secondary limit is learned by being refused (then nothing more is
	// sent until its Retry-After, ghapp's tests show).
	require.Positive(t, refusedForALimit(t, h.gh))
}
