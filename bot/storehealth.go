package bot

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/store"
)

// storeHealthInterval is how often the store is pinged.
const storeHealthInterval = time.Second

// storeHealth pings the store in the background. While it cannot be
// reached, the workers and the apply scheduler claim nothing (claims would
// fail, and work started could not record its outcome); /readyz answers
// 503 on its own ping and intake answers 503 to every delivery it cannot
// persist, so nothing acknowledged is lost.
type storeHealth struct {
	st   store.Store
	log  *logrus.Entry
	down atomic.Bool
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// paused says whether claiming is paused: the last ping failed.
func (h *storeHealth) paused() bool { return h.down.Load() }

func (h *storeHealth) start(ctx context.Context) {
	ctx, h.stop = context.WithCancel(context.WithoutCancel(ctx))
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(storeHealthInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			h.check(ctx)
		}
	}()
}

func (h *storeHealth) check(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, storeHealthInterval)
	err := h.st.Ping(pctx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	switch {
	case err != nil && !h.down.Swap(true):
		h.log.WithError(err).Error("store unreachable: claiming paused; deliveries are refused (503) until it is back")
	case err == nil && h.down.Swap(false):
		h.log.Info("store reachable again: claiming resumed")
	}
}

func (h *storeHealth) close() {
	if h.stop != nil {
		h.stop()
	}
	h.wg.Wait()
}
