package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// GitHubBudget is what GitHub last said about one installation's rate
// limits, as the shardgate_github_* gauges show it.
type GitHubBudget struct {
	InstallationID   int64
	Limit, Remaining int
	Reset            time.Time
	// SecondaryUntil is when a secondary limit's Retry-After ends (zero:
	// none holds).
	SecondaryUntil time.Time
	// Paced counts the requests shardgate held back itself to stay under
	// GitHub's secondary limits, by limit ("content", "concurrency"), and
	// PacedFor how long they were held.
	Paced    map[string]int64
	PacedFor map[string]time.Duration
}

// maxGitHubInstallations bounds the per-installation series; the budgets
// come from ghapp.Budgets, itself bounded to as many installations.
const maxGitHubInstallations = 1024

// pacedLimits are the limits a paced wait is for (ghapp.PaceContent,
// ghapp.PaceConcurrency).
var pacedLimits = []string{"content", "concurrency"}

// githubCollector reports the installations' rate-limit budgets at each scrape.
type githubCollector struct {
	limit, remaining, reset, secondary *prometheus.Desc
	paced, pacedFor                    *prometheus.Desc
	read                               func() []GitHubBudget
}

func newGitHubCollector(read func() []GitHubBudget) prometheus.Collector {
	labels := []string{"installation"}
	return &githubCollector{read: read,
		limit: prometheus.NewDesc("shardgate_github_rate_limit_limit",
			"Requests an hour GitHub grants the installation (x-ratelimit-limit of its last answer).", labels, nil),
		remaining: prometheus.NewDesc("shardgate_github_rate_limit_remaining",
			"Requests the installation has left until its reset (x-ratelimit-remaining, less the requests in flight).", labels, nil),
		reset: prometheus.NewDesc("shardgate_github_rate_limit_reset_timestamp_seconds",
			"When the installation's budget is refilled (x-ratelimit-reset, Unix time).", labels, nil),
		secondary: prometheus.NewDesc("shardgate_github_secondary_limit_until_timestamp_seconds",
			"Until when GitHub's secondary limit (Retry-After) holds the installation's requests (Unix time; 0: none).", labels, nil),
		paced: prometheus.NewDesc("shardgate_github_paced_requests_total",
			"Requests of the installation shardgate held back to stay under GitHub's secondary limits, by limit (content, concurrency).",
			[]string{"installation", "limit"}, nil),
		pacedFor: prometheus.NewDesc("shardgate_github_paced_wait_seconds_total",
			"How long those requests were held back, by limit.", []string{"installation", "limit"}, nil)}
}

func (c *githubCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.limit
	ch <- c.remaining
	ch <- c.reset
	ch <- c.secondary
	ch <- c.paced
	ch <- c.pacedFor
}

func (c *githubCollector) Collect(ch chan<- prometheus.Metric) {
	if c.read == nil {
		return
	}
	for i, b := range c.read() {
		if i >= maxGitHubInstallations {
			return
		}
		id := strconv.FormatInt(b.InstallationID, 10)
		var until float64
		if !b.SecondaryUntil.IsZero() {
			until = float64(b.SecondaryUntil.Unix())
		}
		ch <- prometheus.MustNewConstMetric(c.secondary, prometheus.GaugeValue, until, id)
		for _, limit := range pacedLimits {
			ch <- prometheus.MustNewConstMetric(c.paced, prometheus.CounterValue, float64(b.Paced[limit]), id, limit)
			ch <- prometheus.MustNewConstMetric(c.pacedFor, prometheus.CounterValue, b.PacedFor[limit].Seconds(), id, limit)
		}
		if b.Limit == 0 {
			continue // no primary budget heard yet
		}
		ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(b.Limit), id)
		ch <- prometheus.MustNewConstMetric(c.remaining, prometheus.GaugeValue, float64(b.Remaining), id)
		ch <- prometheus.MustNewConstMetric(c.reset, prometheus.GaugeValue, float64(b.Reset.Unix()), id)
	}
}
