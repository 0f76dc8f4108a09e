package bot

import (
	"time"

	"github.com/shardgate/shardgate/bot/server/metrics"
	"github.com/shardgate/shardgate/bot/statuspage"
	"github.com/shardgate/shardgate/github/ghapp"
)

// budgeted is a ClientCreator that knows its installations' rate limits
// (ghapp.CachingClientCreator).
type budgeted interface {
	Budgets() *ghapp.Budgets
}

// githubBudgets is what GitHub last said about each installation's limits;
// nil when the clients do not keep it.
func (s *Server) githubBudgets() []ghapp.Budget {
	b, ok := s.clients.(budgeted)
	if !ok {
		return nil
	}
	return b.Budgets().All()
}

// metricBudgets is githubBudgets for the shardgate_github_* gauges.
func (s *Server) metricBudgets() []metrics.GitHubBudget {
	var out []metrics.GitHubBudget
	for _, b := range s.githubBudgets() {
		out = append(out, metrics.GitHubBudget{InstallationID: b.InstallationID, Limit: b.Limit, Remaining: b.Remaining,
			Reset: b.Reset, SecondaryUntil: b.SecondaryUntil, Paced: b.Paced, PacedFor: b.PacedFor})
	}
	return out
}

// statusBudgets is githubBudgets for the status page.
func (s *Server) statusBudgets() []statuspage.GitHubBudget {
	var out []statuspage.GitHubBudget
	for _, b := range s.githubBudgets() {
		out = append(out, statuspage.GitHubBudget{InstallationID: b.InstallationID, Limit: b.Limit, Remaining: b.Remaining,
			Reset: b.Reset, SecondaryUntil: b.SecondaryUntil})
	}
	return out
}

// githubWait says whether a job's error is GitHub's rate limit: the job is
// postponed until the reset or Retry-After, not failed.
func (s *Server) githubWait(err error) (time.Time, string, bool) {
	until, limit, ok := ghapp.LimitWait(err, s.now())
	if !ok {
		return time.Time{}, "", false
	}
	return until, "github " + limit + " rate limit", true
}
