package metrics

import (
	"errors"
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// The store-derived metrics are read at each scrape, so they are right after
// a restart and across replicas sharing a store. A read that fails reports
// NaN rather than failing the whole scrape: the other metrics still arrive,
// and NaN says "unknown", never a false zero.

var errNoSource = errors.New("metrics: no source")

func newQueueDepth(queued func() (int, error)) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "shardgate_queue_depth", Help: "Webhook jobs queued in the store, waiting for a worker (NaN when the store cannot be read).",
	}, func() float64 {
		if queued == nil {
			return math.NaN()
		}
		n, err := queued()
		if err != nil {
			return math.NaN()
		}
		return float64(n)
	})
}

// applyJobsCollector reports the apply jobs in the store by state.
type applyJobsCollector struct {
	desc  *prometheus.Desc
	count func() (map[string]int, error)
}

func newApplyJobsCollector(count func() (map[string]int, error)) prometheus.Collector {
	return &applyJobsCollector{count: count, desc: prometheus.NewDesc("shardgate_apply_jobs",
		"Apply jobs in the store by state (finished ones until pruned; NaN when the store cannot be read).", []string{"state"}, nil)}
}

func (c *applyJobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *applyJobsCollector) Collect(ch chan<- prometheus.Metric) {
	var counts map[string]int
	err := errNoSource
	if c.count != nil {
		counts, err = c.count()
	}
	for _, st := range ApplyStates {
		v := float64(counts[st])
		if err != nil {
			v = math.NaN()
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, st)
	}
}
