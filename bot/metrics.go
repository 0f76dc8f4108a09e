package bot

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	deliveries *prometheus.CounterVec
	jobs       *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shardgate_webhook_deliveries_total", Help: "Webhook deliveries by event and outcome.",
		}, []string{"event", "outcome"}),
		jobs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shardgate_job_duration_seconds", Help: "Time to run a queued job, by event and outcome.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}, []string{"event", "outcome"}),
	}
	reg.MustRegister(m.deliveries, m.jobs)
	return m
}

func (m *metrics) observeDelivery(event, outcome string) {
	m.deliveries.WithLabelValues(event, outcome).Inc()
}

func (m *metrics) observeJob(event string, err error, d time.Duration) {
	outcome := "done"
	if err != nil {
		outcome = "failed"
	}
	m.jobs.WithLabelValues(event, outcome).Observe(d.Seconds())
}
