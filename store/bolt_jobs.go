package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Enqueue persists a queued job (see Store). Concurrent calls share one
// transaction and one fsync through bbolt's Batch, which is what lets intake
// acknowledge many deliveries a second durably.
func (b *Bolt) Enqueue(ctx context.Context, job *Job, maxQueued int) error {
	if job == nil {
		return errors.New("enqueue job: job is nil")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("enqueue job: %w", err)
	}
	// Refuse redeliveries and a full queue from a read transaction first:
	// inside Batch a failing call rolls back the whole batch, which bbolt then
	// re-runs without it, so every refusal there costs the others a retry.
	if err := b.db.View(func(tx *bolt.Tx) error {
		return queueOf(tx).admit(job.DeliveryID, maxQueued)
	}); err != nil {
		return txError("enqueue job", err)
	}

	now := b.now().UTC()
	var stored Job
	// Batch may run this more than once, in different transactions: it only
	// writes through tx and sets stored afresh each time, and job is filled in
	// only after Batch reports the commit. The last run is the committed one.
	err := b.db.Batch(func(tx *bolt.Tx) error {
		q := queueOf(tx)
		if err := q.admit(job.DeliveryID, maxQueued); err != nil {
			return err
		}
		seq, err := q.jobs.NextSequence()
		if err != nil {
			return fmt.Errorf("next job id: %w", err)
		}
		stored = *job
		stored.ID = jobKey(seq)
		stored.State, stored.Attempts, stored.Owner, stored.LastError = JobQueued, 0, "", ""
		stored.NotBefore, stored.LeaseUntil = time.Time{}, time.Time{}
		stored.CoalescedInto, stored.Coalesced, stored.merged = "", nil, nil
		stored.CreatedAt, stored.UpdatedAt = now, now
		return q.insert(&stored)
	})
	if err != nil {
		return txError("enqueue job", err)
	}
	*job = stored
	return nil
}

// Claim marks the fairest due queued job running for owner (see Store).
func (b *Bolt) Claim(ctx context.Context, owner string) (*Job, error) {
	var claimed *Job
	err := b.update(ctx, "claim job", func(tx *bolt.Tx) error {
		j, err := queueOf(tx).claimFair(owner, b.now().UTC())
		claimed = j
		return err
	})
	if err != nil {
		return nil, err
	}
	return claimed, nil
}

// Complete finishes a job running for owner (see Store).
func (b *Bolt) Complete(ctx context.Context, id, owner string, jobErr error) error {
	return b.update(ctx, "complete job", func(tx *bolt.Tx) error {
		q := queueOf(tx)
		j, err := q.ownedJob(id, owner)
		if err != nil {
			return err
		}
		now := b.now().UTC()
		if err := q.finish(j, jobErr, now); err != nil {
			return err
		}
		return q.endCoalesced(j, now)
	})
}

// Release hands a job running for owner back to the head of the queue (see
// Store).
func (b *Bolt) Release(ctx context.Context, id, owner string) error {
	return b.update(ctx, "release job", func(tx *bolt.Tx) error {
		q := queueOf(tx)
		j, err := q.ownedJob(id, owner)
		if err != nil {
			return err
		}
		return q.requeue(j, b.now().UTC())
	})
}

// Retry hands a running job back until notBefore (see Store).
func (b *Bolt) Retry(ctx context.Context, id, owner string, jobErr error, notBefore time.Time) error {
	return b.update(ctx, "retry job", func(tx *bolt.Tx) error {
		q := queueOf(tx)
		j, err := q.ownedJob(id, owner)
		if err != nil {
			return err
		}
		return q.delay(j, jobErr, notBefore.UTC(), b.now().UTC())
	})
}

// Postpone hands a running job back until notBefore, its claim uncounted
// (see Store).
func (b *Bolt) Postpone(ctx context.Context, id, owner string, reason error, notBefore time.Time) error {
	return b.update(ctx, "postpone job", func(tx *bolt.Tx) error {
		q := queueOf(tx)
		j, err := q.ownedJob(id, owner)
		if err != nil {
			return err
		}
		j.Attempts = max(j.Attempts-1, 0)
		return q.delay(j, reason, notBefore.UTC(), b.now().UTC())
	})
}

// RecoverRunning requeues every running job (see Store).
func (b *Bolt) RecoverRunning(ctx context.Context) (int, error) {
	n := 0
	err := b.update(ctx, "recover running jobs", func(tx *bolt.Tx) error {
		n = 0
		q := queueOf(tx)
		var ids []string
		c := q.running.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			ids = append(ids, string(k))
		}
		now := b.now().UTC()
		for _, id := range ids {
			j, err := q.runningJob(id)
			if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotRunning) {
				// A stale index entry: nothing to recover, and keeping it
				// would trip every later start.
				if derr := q.unrun(id); derr != nil {
					return derr
				}
				continue
			}
			if err != nil {
				return err
			}
			if err := q.requeue(j, now); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// CountQueued is the number of queued jobs.
func (b *Bolt) CountQueued(ctx context.Context) (int, error) {
	n := 0
	err := b.view(ctx, "count queued jobs", func(tx *bolt.Tx) error {
		n = queueOf(tx).count()
		return nil
	})
	return n, err
}

// GetJob returns one job with its payload.
func (b *Bolt) GetJob(ctx context.Context, id string) (*Job, error) {
	var j *Job
	err := b.view(ctx, "get job", func(tx *bolt.Tx) error {
		var err error
		j, err = queueOf(tx).getWithPayload(id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return j, nil
}
