package bot

import (
	"context"
	"errors"
	"time"

	"github.com/shardgate/shardgate/drift"
	"github.com/shardgate/shardgate/metrics"
	"github.com/shardgate/shardgate/webhook"
)

// scrapeTimeout bounds each store read of a scrape.
const scrapeTimeout = 5 * time.Second

var errNoApplyQueue = errors.New("metrics: no apply queue")

// metricSources reads the server's store for the scrape-time metrics.
func (s *Server) metricSources() metrics.Sources {
	return metrics.Sources{
		Queued: func() (int, error) {
			ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
			defer cancel()
			return s.store.CountQueued(ctx)
		},
		ApplyJobs: func() (map[string]int, error) {
			if s.applies == nil {
				return nil, errNoApplyQueue
			}
			ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
			defer cancel()
			jobs, err := s.applies.List(ctx)
			if err != nil {
				return nil, err
			}
			counts := map[string]int{}
			for _, j := range jobs {
				counts[string(j.State)]++
			}
			return counts, nil
		},
		Drift: func() ([]metrics.DriftProject, error) {
			ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
			defer cancel()
			return drift.NewStore(s.store).MetricProjects(ctx)
		},
	}
}

// countRunning wraps the event handlers so that the running-jobs gauge counts
// the jobs in their Handle.
func countRunning(m *metrics.Metrics, hs []webhook.EventHandler) []webhook.EventHandler {
	if m == nil {
		return hs
	}
	out := make([]webhook.EventHandler, len(hs))
	for i, h := range hs {
		out[i] = runningHandler{EventHandler: h, m: m}
	}
	return out
}

type runningHandler struct {
	webhook.EventHandler
	m *metrics.Metrics
}

func (h runningHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	defer h.m.JobStarted()()
	return h.EventHandler.Handle(ctx, eventType, deliveryID, payload)
}
