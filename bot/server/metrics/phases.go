package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardgate/shardgate/internal/phases"
)

func newPlanPhases() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "shardgate_plan_job_phase_seconds",
		Help: "Time of one pull request's plan job in each phase: checkout, sandbox_start, terraform, parse, live_reads, policy, github (GitHub API calls outside the checkout).",
		// 1ms .. ~33s
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"phase"})
}

// ObservePlanPhases records where one plan job's time went, every phase
// (zero for the ones it did not reach).
func (m *Metrics) ObservePlanPhases(d map[string]time.Duration) {
	if m == nil {
		return
	}
	for _, p := range phases.Names {
		m.planPhases.WithLabelValues(p).Observe(d[p].Seconds())
	}
}
