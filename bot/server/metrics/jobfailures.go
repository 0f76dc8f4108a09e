package metrics

import "github.com/prometheus/client_golang/prometheus"

// Outcomes of a failed webhook job: the outcome label values of
// shardgate_job_failures_total.
var jobFailureOutcomes = []string{"retried", "failed"}

func newJobFailures() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shardgate_job_failures_total",
		Help: "Failed attempts of webhook jobs, by event and outcome (retried: handed back for another try; failed: for good).",
	}, []string{"event", "outcome"})
}

// ObserveJobFailure counts one failed attempt of a job of event: retried
// (handed back for another try after a transient error) or failed (for good).
func (m *Metrics) ObserveJobFailure(event string, retried bool) {
	if m == nil {
		return
	}
	outcome := "failed"
	if retried {
		outcome = "retried"
	}
	m.jobFailures.WithLabelValues(m.eventLabel(event), outcome).Inc()
}

// jobFailureSeries creates the series of event.
func (m *Metrics) jobFailureSeries(event string) {
	for _, o := range jobFailureOutcomes {
		m.jobFailures.WithLabelValues(event, o)
	}
}
