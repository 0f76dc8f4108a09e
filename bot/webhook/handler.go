// Package webhook receives GitHub's webhook deliveries and runs them: the
// intake verifies, bounds and persists each delivery and answers at once; the
// dispatcher claims the queued jobs, holds their leases, retries transient
// failures with backoff and hands each job to the one handler of its event;
// the store health check pauses claiming while the store cannot be reached
// and answers /readyz. What a delivery means is the handlers' business
// (package bot): this package only gets each delivery to them.
package webhook

import (
	"context"
	"fmt"
)

// JobKindEvent is the store.Job kind of a webhook delivery.
const JobKindEvent = "event"

// EventHandler handles the webhook events it names. One small type per event.
type EventHandler interface {
	// Handles lists the X-GitHub-Event values this handler takes.
	Handles() []string
	// Handle processes one delivery. It runs from the durable queue, never in
	// the HTTP request; a returned error marks the job failed and is logged.
	Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error
}

// registry maps each event to its one handler.
type registry map[string]EventHandler

// newRegistry refuses two handlers for one event: which would run is
// otherwise a matter of order.
func newRegistry(handlers []EventHandler) (registry, error) {
	r := registry{}
	for _, h := range handlers {
		for _, e := range h.Handles() {
			if _, dup := r[e]; dup {
				return nil, fmt.Errorf("two handlers for %q events", e)
			}
			r[e] = h
		}
	}
	return r, nil
}

// events lists the event types that have a handler.
func (r registry) events() []string {
	out := make([]string, 0, len(r))
	for e := range r {
		out = append(out, e)
	}
	return out
}
