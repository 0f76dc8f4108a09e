package bot

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// TestACommentStormIsPacedUnderGitHubsSecondaryLimit: with the installation's
// writes paced under the fake GitHub's content limit, a storm of commands on
// one pull request never meets the secondary limit; every comment gets its
// reply, and /metrics shows the paced requests.
func TestACommentStormIsPacedUnderGitHubsSecondaryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("terraform")
	}
	h := newHarnessBase(t)
	// 600 a minute is 20 in 2 s: under the fake's 30 per 2 s below, burst
	// included.
	h.cfg.GitHubPace = ghapp.Pace{ContentPerMinute: 600, ContentPerHour: 100000, ContentBurst: 5, MaxConcurrent: 10}
	h.start()
	pr := h.openPR("storm", map[string]int{"create-order/billing": 4, "create-order/audit": 4, "payments/ledger": 2})
	h.gh.SetRateLimits(githubtest.RateLimits{Content: 30, ContentWindow: 2 * time.Second, RetryAfter: time.Second})
	ids := h.storm(pr, 40)
	h.waitJobs(ids, 3*time.Minute)
	require.Zero(t, refusedForALimit(t, h.gh), "paced: the secondary limit was never met")

	m := regexp.MustCompile(`shardgate_github_paced_requests_total\{installation="1",limit="content"\} (\d+)`).FindStringSubmatch(h.scrape())
	require.NotNil(t, m, "the paced requests are on /metrics")
	paced, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)
	require.Positive(t, paced)
}
