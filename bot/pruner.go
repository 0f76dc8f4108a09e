package bot

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/applyqueue"
	"github.com/shardgate/shardgate/serverconfig"
	"github.com/shardgate/shardgate/store"
)

// pruneEvery is how often the pruner runs.
const pruneEvery = time.Hour

// pruner deletes, once every pruneEvery, the apply jobs and the webhook jobs
// that finished more than retention ago (webhook jobs at least
// store.DeliveryRetention, so a late redelivery is still refused). It does
// nothing while claiming is paused. Replicas pruning at once skip or repeat
// each other's deletes harmlessly.
type pruner struct {
	applies   *applyqueue.Queue
	st        store.Store
	retention time.Duration
	every     time.Duration
	now       func() time.Time
	paused    func() bool
	log       *logrus.Entry
	// passes counts the passes made (tests wait on it).
	passes atomic.Int64
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

func (p *pruner) start(ctx context.Context) {
	ctx, p.stop = context.WithCancel(context.WithoutCancel(ctx))
	every := p.every
	if every <= 0 {
		every = pruneEvery
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			p.pass(ctx)
		}
	}()
}

// pass prunes once.
func (p *pruner) pass(ctx context.Context) {
	defer p.passes.Add(1)
	if p.paused != nil && p.paused() {
		return
	}
	retention := p.retention
	if retention <= 0 {
		retention = serverconfig.DefaultRetention
	}
	now := p.now()
	applies, err := p.applies.Prune(ctx, now.Add(-retention))
	if err != nil && ctx.Err() == nil {
		p.log.WithError(err).Error("prune finished apply jobs")
	}
	jobs, err := p.st.PruneDone(ctx, now.Add(-max(retention, store.DeliveryRetention)))
	if err != nil && ctx.Err() == nil {
		p.log.WithError(err).Error("prune finished webhook jobs")
	}
	if applies+jobs > 0 {
		p.log.WithFields(logrus.Fields{"apply_jobs": applies, "webhook_jobs": jobs, "retention": retention.String()}).
			Info("pruned finished jobs")
	}
}

func (p *pruner) close() {
	if p.stop != nil {
		p.stop()
	}
	p.wg.Wait()
}
