package store

import (
	"context"
	"errors"
)

// ErrNotQueued: CancelQueued of a job that is not queued (running or
// finished), or RequeueFailed of one that did not fail; nothing changed.
var ErrNotQueued = errors.New("store: job is not in the state the change needs")

// CancelledPrefix starts the LastError of a job CancelQueued ended: such a
// job is done (it never runs), and its error says who cancelled it.
const CancelledPrefix = "cancelled"

// JobAdmin is what an operator does to jobs from outside the workers (the
// automation API): list them by state, cancel one still waiting, and run a
// failed one again. Bolt and Postgres implement it.
type JobAdmin interface {
	// JobsByState returns up to limit jobs in state, without payloads, by
	// id, those after the id after first ("" from the start): the id of the
	// last job of a page is the cursor of the next. Queued lists the jobs
	// waiting for a retry too.
	JobsByState(ctx context.Context, state JobState, after string, limit int) ([]*Job, error)
	// CancelQueued ends a queued job (waiting for its turn or its retry)
	// without running it: it becomes done with LastError "cancelled: " +
	// reason, leaves the queue depth, and the jobs coalesced into it end as
	// it does. ErrNotQueued when it is running or finished, ErrNotFound for
	// an unknown id.
	CancelQueued(ctx context.Context, id, reason string) (*Job, error)
	// RequeueFailed queues a job that failed for good again, at its place
	// (its id), due at once, its attempts reset to 0 (a fresh start: the
	// worker's retry budget applies again) and its last error kept until it
	// runs. maxQueued is ignored: the job was admitted once. ErrNotQueued
	// when it did not fail, ErrNotFound for an unknown id.
	RequeueFailed(ctx context.Context, id string) (*Job, error)
}

var (
	_ JobAdmin = (*Bolt)(nil)
	_ JobAdmin = (*Postgres)(nil)
)

// cancelledError is the LastError of a cancelled job.
func cancelledError(reason string) string {
	if reason == "" {
		return CancelledPrefix
	}
	return CancelledPrefix + ": " + reason
}
