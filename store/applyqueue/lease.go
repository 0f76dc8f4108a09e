package applyqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shardgate/shardgate/store"
)

// Acquire takes the job for this process if it is runnable now (see
// Runnable): it sets the lease and counts the attempt. It fails with
// ErrNotRunnable otherwise. An Attempt above 1 means an earlier holder was
// cut short: the job must resume from the current state (re-plan), never from
// a stale plan.
func (q *Queue) Acquire(ctx context.Context, seq string) (*Job, error) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	jobs, err := q.loadLive(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire apply job %s: %w", seq, err)
	}
	if !slices.ContainsFunc(runnableApplies(jobs, q.clock()), func(j *Job) bool { return j.Seq == seq }) {
		if _, err := q.st.Get(ctx, applyBucket, seq); err != nil {
			return nil, fmt.Errorf("acquire apply job %s: %w", seq, err)
		}
		return nil, fmt.Errorf("acquire apply job %s: %w", seq, ErrNotRunnable)
	}
	return q.takeLease(ctx, seq)
}

// Renew extends the lease of a job this process holds; ErrNotHolder once
// another process took it over (this process must then stop working on it).
func (q *Queue) Renew(ctx context.Context, seq string) error {
	start := q.clock()
	err := q.mutate(ctx, seq, func(j *Job) error {
		if err := q.holds(j); err != nil {
			return err
		}
		j.LeaseUntil = q.clock().Add(q.lease)
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotHolder) {
			q.drop(seq)
		}
		return fmt.Errorf("renew apply job %s: %w", seq, err)
	}
	q.renewed(seq, start)
	return nil
}

// Update persists what the running job changed in fn (State, Reason,
// Progress, SHAs, CheckRunID). Only the holder may update; fn may not change
// the order, the streams or the lease, nor finish the job (that is Finish).
// fn runs inside the store's write transaction: it must be quick and must
// not call the queue.
func (q *Queue) Update(ctx context.Context, seq string, fn func(*Job) error) error {
	err := q.mutate(ctx, seq, func(j *Job) error {
		if err := q.holds(j); err != nil {
			return err
		}
		before := cloneApply(j)
		if err := fn(j); err != nil {
			return err
		}
		switch {
		case j.Seq != before.Seq || j.RetryOf != before.RetryOf || !j.CreatedAt.Equal(before.CreatedAt):
			return errors.New("the job's place in the order cannot change")
		case !slices.Equal(j.Streams, before.Streams) || j.StateKey != before.StateKey:
			return errors.New("the streams and state of a running job cannot change")
		case j.LeaseOwner != before.LeaseOwner || !j.LeaseUntil.Equal(before.LeaseUntil) || j.Attempt != before.Attempt ||
			j.Fence != before.Fence:
			return errors.New("the lease is the queue's to change")
		case j.State.Finished():
			return fmt.Errorf("state %q finishes the job: use Finish", j.State)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update apply job %s: %w", seq, err)
	}
	return nil
}

// Finish records the outcome of a job this process holds and drops its
// lease, which frees its streams for the jobs behind it.
func (q *Queue) Finish(ctx context.Context, seq string, state State, reason string) error {
	if !state.Finished() {
		return fmt.Errorf("finish apply job %s: state %q is not applied or failed", seq, state)
	}
	err := q.mutate(ctx, seq, func(j *Job) error {
		if err := q.holds(j); err != nil {
			return err
		}
		j.State, j.Reason = state, reason
		j.LeaseOwner, j.LeaseUntil = "", time.Time{}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotHolder) {
			q.drop(seq)
		}
		return fmt.Errorf("finish apply job %s: %w", seq, err)
	}
	q.drop(seq)
	return nil
}

// mutate applies fn to one stored job in a single transaction, which writes
// its live copy too; fn's error leaves the record as it was. fn may run more
// than once (the store may retry the transaction).
func (q *Queue) mutate(ctx context.Context, seq string, fn func(*Job) error) error {
	return q.st.Tx(ctx, func(tx store.RecordTx) error {
		j, err := getApply(tx, seq)
		if err != nil {
			return err
		}
		if err := fn(j); err != nil {
			return err
		}
		j.UpdatedAt = q.clock()
		return writeApply(tx, j)
	})
}
