package bot

import (
	"context"
	"errors"
	"time"

	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/server/metrics"
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
		GitHub: s.metricBudgets,
		Notifications: func() (int, int, error) {
			ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
			defer cancel()
			return s.notificationCounts(ctx)
		},
	}
}
