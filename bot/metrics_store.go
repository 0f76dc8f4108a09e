package bot

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The store-derived metrics are read at each scrape, so they are right after
// a restart and across replicas sharing a store. A read that fails reports
// NaN rather than failing the whole scrape: the other metrics still arrive,
// and NaN says "unknown", never a false zero.

var errNoSource = errors.New("metrics: no source")

// scrapeTimeout bounds each store read of a scrape.
const scrapeTimeout = 5 * time.Second

// metricSources reads the server's store for the scrape-time metrics.
func (s *Server) metricSources() metricSources {
	return metricSources{
		queued: func() (int, error) {
			ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
			defer cancel()
			return s.store.CountQueued(ctx)
		},
		applyJobs: func() ([]*ApplyJob, error) {
			if s.applies == nil {
				return nil, errNoSource
			}
			ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
			defer cancel()
			return s.applies.List(ctx)
		},
	}
}

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
	desc *prometheus.Desc
	list func() ([]*ApplyJob, error)
}

func newApplyJobsCollector(list func() ([]*ApplyJob, error)) prometheus.Collector {
	return &applyJobsCollector{list: list, desc: prometheus.NewDesc("shardgate_apply_jobs",
		"Apply jobs in the store by state (finished ones until pruned; NaN when the store cannot be read).", []string{"state"}, nil)}
}

func (c *applyJobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *applyJobsCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[ApplyState]float64{}
	var jobs []*ApplyJob
	err := errNoSource
	if c.list != nil {
		jobs, err = c.list()
	}
	for _, j := range jobs {
		counts[j.State]++
	}
	for _, st := range applyStates {
		v := counts[st]
		if err != nil {
			v = math.NaN()
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, string(st))
	}
}
