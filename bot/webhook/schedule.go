package webhook

import (
	"context"

	"github.com/shardgate/shardgate/store"
)

// Identity is what the intake stores with a delivery for the dispatcher's
// fair claims (store.Job's Installation, Lane and CoalesceKey): the zero
// value is none.
type Identity struct {
	Installation int64
	// Lane names the pull request the delivery is about ("owner/repo#N"):
	// its jobs run one at a time, in order.
	Lane string
	// CoalesceKey is set on deliveries that queued together are one piece
	// of work (identical commands on one pull request).
	CoalesceKey string
	// Priority: a delivery of a higher one is claimed before queued ones of
	// a lower one (store.Job.Priority); 0 is the normal one.
	Priority int
}

// Identifier reads a delivery's identity from its event type and payload;
// it must not fail (a payload it cannot read has no identity).
type Identifier func(event string, payload []byte) Identity

// Duplicate is one delivery coalesced into the job a handler runs.
type Duplicate struct {
	JobID, DeliveryID string
	Payload           []byte
}

type coalescedKey struct{}

// withCoalesced hands the handler the deliveries its job stands for too.
func withCoalesced(ctx context.Context, jobs []*store.Job) context.Context {
	if len(jobs) == 0 {
		return ctx
	}
	dups := make([]Duplicate, 0, len(jobs))
	for _, j := range jobs {
		dups = append(dups, Duplicate{JobID: j.ID, DeliveryID: j.DeliveryID, Payload: j.Payload})
	}
	return context.WithValue(ctx, coalescedKey{}, dups)
}

// Coalesced lists the deliveries coalesced into the job ctx works for,
// oldest first (none outside a job or when nothing was coalesced). They are
// finished in the store: the handler answers for them (names them in its
// reply), or nobody does.
func Coalesced(ctx context.Context) []Duplicate {
	dups, _ := ctx.Value(coalescedKey{}).([]Duplicate)
	return dups
}
