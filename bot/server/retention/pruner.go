// Package retention keeps the store bounded: a pruner deletes, on a schedule,
// the apply jobs and webhook jobs that finished longer ago than the
// configured retention.
package retention

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/loop"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// DefaultEvery is how often the pruner runs.
const DefaultEvery = time.Hour

// Pruner deletes, once every Every, the apply jobs and the webhook jobs that
// finished more than the retention ago (webhook jobs at least
// store.DeliveryRetention, so a late redelivery is still refused). It does
// nothing while Paused says so. Replicas pruning at once skip or repeat each
// other's deletes harmlessly.
type Pruner struct {
	applies   *applyqueue.Queue
	st        store.Store
	retention time.Duration
	now       func() time.Time
	log       *logrus.Entry
	// Every is how often the pruner runs (DefaultEvery when zero); set it
	// before Start.
	Every time.Duration
	// Paused says whether to skip a pass (claiming is paused: the store
	// cannot be reached); may be nil. Set it before Start.
	Paused func() bool

	// passes counts the passes made (tests wait on it).
	passes atomic.Int64
	loop   *loop.Background
}

// New returns the pruner of applies and st's webhook jobs; retention <= 0
// means serverconfig.DefaultRetention, now is the clock the cut-off is taken
// from. Start begins the passes.
func New(applies *applyqueue.Queue, st store.Store, retention time.Duration, now func() time.Time, log *logrus.Entry) *Pruner {
	if retention <= 0 {
		retention = serverconfig.DefaultRetention
	}
	return &Pruner{applies: applies, st: st, retention: retention, now: now, log: log}
}

// Start prunes every Every until Close.
func (p *Pruner) Start(ctx context.Context) {
	every := p.Every
	if every <= 0 {
		every = DefaultEvery
	}
	p.loop = loop.Start(ctx, every, p.Paused, p.pass)
}

// Close stops the passes and waits for the one under way.
func (p *Pruner) Close() { p.loop.Stop() }

// pass prunes once.
func (p *Pruner) pass(ctx context.Context) {
	defer p.passes.Add(1)
	now := p.now()
	applies, err := p.applies.Prune(ctx, now.Add(-p.retention))
	if err != nil && ctx.Err() == nil {
		p.log.WithError(err).Error("prune finished apply jobs")
	}
	jobs, err := p.st.PruneDone(ctx, now.Add(-max(p.retention, store.DeliveryRetention)))
	if err != nil && ctx.Err() == nil {
		p.log.WithError(err).Error("prune finished webhook jobs")
	}
	if applies+jobs > 0 {
		p.log.WithFields(logrus.Fields{"apply_jobs": applies, "webhook_jobs": jobs, "retention": p.retention.String()}).
			Info("pruned finished jobs")
	}
}
