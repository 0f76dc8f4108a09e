package metrics

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// notificationOutcomes are the outcome label values of
// shardgate_notification_attempts_total.
var notificationOutcomes = []string{"sent", "retried", "failed"}

func newNotificationAttempts() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shardgate_notification_attempts_total",
		Help: "Attempts to deliver a notification by this process, by outcome (sent; retried: handed back for later; failed: given up).",
	}, []string{"outcome"})
	for _, o := range notificationOutcomes {
		c.WithLabelValues(o)
	}
	return c
}

// ObserveNotification counts one delivery attempt's outcome.
func (m *Metrics) ObserveNotification(outcome string) {
	if m == nil {
		return
	}
	m.notifyAttempts.WithLabelValues(boundedLabel(outcome, notificationOutcomes)).Inc()
}

func boundedLabel(v string, allowed []string) string {
	for _, a := range allowed {
		if a == v {
			return v
		}
	}
	return otherLabel
}

// notificationsCollector reports the deliveries in the store's outbox that
// are pending (waiting, or being sent) and failed (given up, until pruned).
type notificationsCollector struct {
	desc  *prometheus.Desc
	count func() (pending, failed int, err error)
}

func newNotificationsCollector(count func() (pending, failed int, err error)) prometheus.Collector {
	return &notificationsCollector{count: count, desc: prometheus.NewDesc("shardgate_notification_deliveries",
		"Notification deliveries in the store by state: pending (to be sent or retried) and failed (given up; kept 7 days). NaN when the store cannot be read.",
		[]string{"state"}, nil)}
}

func (c *notificationsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *notificationsCollector) Collect(ch chan<- prometheus.Metric) {
	pending, failed := math.NaN(), math.NaN()
	if c.count != nil {
		if p, f, err := c.count(); err == nil {
			pending, failed = float64(p), float64(f)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, pending, "pending")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, failed, "failed")
}
