// Package loop is how shardgate's background work repeats: a function run
// every interval until its context ends, skipped while paused (the pruner,
// the store health check), and the heartbeat that keeps a lease while a job
// runs (the webhook dispatcher, the apply scheduler). Its tests run it in
// testing/synctest's bubble, whose clock moves only when every goroutine
// waits.
package loop

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Every calls f once every interval, the first time one interval after the
// call, until ctx ends or f returns false. While paused (nil: never) says
// so, the call is skipped.
func Every(ctx context.Context, interval time.Duration, paused func() bool, f func(context.Context) bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if paused != nil && paused() {
			continue
		}
		if !f(ctx) {
			return
		}
	}
}

// Background is Every running on its own goroutine.
type Background struct {
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// Start runs f every interval (skipped while paused) on a context detached
// from ctx's cancellation (it keeps its values) until Stop.
func Start(ctx context.Context, interval time.Duration, paused func() bool, f func(context.Context)) *Background {
	b := &Background{}
	ctx, b.stop = context.WithCancel(context.WithoutCancel(ctx))
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		Every(ctx, interval, paused, func(ctx context.Context) bool { f(ctx); return true })
	}()
	return b
}

// Stop ends the loop and waits for the call under way; a nil Background
// (never started) has nothing to stop.
func (b *Background) Stop() {
	if b == nil {
		return
	}
	b.stop()
	b.wg.Wait()
}

// Lease says how a lease is kept: renewed every third of its length, given
// up when the holder learns it is someone else's or could not renew it for a
// whole length.
type Lease struct {
	// Length is how long the lease lasts without a renewal.
	Length time.Duration
	// Renew renews the lease once.
	Renew func(context.Context) error
	// Gone says whether Renew's error means the lease is no longer ours (taken
	// over, or its job gone); other errors are tried again.
	Gone func(error) bool
	// Retrying hears each error that is tried again (may be nil).
	Retrying func(error)
	// Now is the clock the lease's store keeps it on (nil: the wall clock):
	// a lease is given up after a whole Length on the same clock the store
	// lets another holder take it on.
	Now func() time.Time
}

// Keep renews the lease until ctx ends, then returns nil; or until the lease
// is lost, then returns why: Renew's error when Gone accepts it, or the last
// error wrapped with the time since the last renewal when none succeeded for
// a whole Length (the store unreachable: another holder may have it by now).
func (l Lease) Keep(ctx context.Context) error {
	now := l.Now
	if now == nil {
		now = time.Now
	}
	renewed := now()
	var lost error
	Every(ctx, max(l.Length/3, time.Millisecond), nil, func(ctx context.Context) bool {
		attempt := now()
		err := l.Renew(ctx)
		switch {
		case err == nil:
			renewed = attempt
			return true
		case ctx.Err() != nil:
			return false
		case l.Gone(err):
			lost = err
			return false
		case now().Sub(renewed) < l.Length:
			if l.Retrying != nil {
				l.Retrying(err)
			}
			return true
		}
		lost = fmt.Errorf("no renewal for %s, a whole lease: %w", now().Sub(renewed).Round(time.Millisecond), err)
		return false
	})
	return lost
}
