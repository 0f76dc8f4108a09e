package webhook

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/internal/loop"
	"github.com/shardgate/shardgate/store"
)

const (
	// storeHealthInterval is how often the store is pinged.
	storeHealthInterval = time.Second
	// storePingTimeout bounds one ping: a database that does not answer
	// within it counts as unreachable.
	storePingTimeout = 5 * time.Second
)

// StoreHealth pings the store in the background. While it cannot be
// reached, the workers and the apply scheduler claim nothing (claims would
// fail, and work started could not record its outcome); /readyz answers
// 503 on its own ping and intake answers 503 to every delivery it cannot
// persist, so nothing acknowledged is lost.
type StoreHealth struct {
	st  store.Store
	log *logrus.Entry
	// Every is how often the store is pinged (once a second when zero); set
	// it before Start.
	Every time.Duration
	down  atomic.Bool
	loop  *loop.Background
}

// NewStoreHealth returns the health check of st; Start begins the pings.
func NewStoreHealth(st store.Store, log *logrus.Entry) *StoreHealth {
	return &StoreHealth{st: st, log: log}
}

// Paused says whether claiming is paused: the last ping failed.
func (h *StoreHealth) Paused() bool { return h.down.Load() }

// Start pings the store every Every until Close.
func (h *StoreHealth) Start(ctx context.Context) {
	every := h.Every
	if every <= 0 {
		every = storeHealthInterval
	}
	h.loop = loop.Start(ctx, every, nil, h.check)
}

func (h *StoreHealth) check(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, storePingTimeout)
	err := h.st.Ping(pctx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	switch {
	case err != nil && !h.down.Swap(true):
		h.log.WithError(err).WithField("store", storeKind(h.st)).
			Error("store unreachable: claiming paused; deliveries are refused (503) until it is back")
	case err == nil && h.down.Swap(false):
		h.log.WithField("store", storeKind(h.st)).Info("store reachable again: claiming resumed")
	}
}

// Close stops the pings and waits for the last one.
func (h *StoreHealth) Close() { h.loop.Stop() }

// Readyz answers GET /readyz from a ping of its own: 503 naming the store
// while it cannot be reached. The ping's error stays in the log the health
// loop writes: it may name the database's host, and /readyz is public.
func (h *StoreHealth) Readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), storePingTimeout)
	defer cancel()
	if err := h.st.Ping(ctx); err != nil {
		http.Error(w, "not ready: the "+storeKind(h.st)+" store is not reachable", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ready\n"))
}

// storeKind names a store for operators: "PostgreSQL", "bbolt".
func storeKind(st store.Store) string {
	if k, ok := st.(interface{ Kind() string }); ok {
		return k.Kind()
	}
	return "state"
}
