package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// JobsByState implements JobAdmin. Running jobs are read from their index,
// queued ones from the queued and delayed indexes; failed ones are found by
// walking the jobs from the cursor on (finished jobs are pruned, which bounds
// the walk).
func (b *Bolt) JobsByState(ctx context.Context, state JobState, after string, limit int) ([]*Job, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []*Job
	err := b.view(ctx, "list jobs", func(tx *bolt.Tx) error {
		out = nil
		q := queueOf(tx)
		var ids []string
		switch state {
		case JobRunning:
			ids = idsAfter(q.running, after, limit)
		case JobQueued:
			ids = idsAfter(q.queued, after, limit)
			_ = q.delayed.ForEach(func(k, _ []byte) error {
				if len(k) > 8 && string(k[8:]) > after {
					ids = append(ids, string(k[8:]))
				}
				return nil
			})
			slices.Sort(ids)
			ids = slices.Compact(ids)
		default:
			c := q.jobs.Cursor()
			for k, v := seekAfter(c, after); k != nil && len(ids) < limit; k, v = c.Next() {
				if bytes.Contains(v, []byte(`"state":"`+string(state)+`"`)) {
					ids = append(ids, string(k))
				}
			}
		}
		for _, id := range ids {
			if len(out) == limit {
				break
			}
			j, err := q.getWithPayload(id)
			if err != nil {
				return err
			}
			if j.State == state {
				out = append(out, j)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// seekAfter places c on the first key after after.
func seekAfter(c *bolt.Cursor, after string) ([]byte, []byte) {
	k, v := c.Seek([]byte(after))
	if k != nil && string(k) == after {
		k, v = c.Next()
	}
	return k, v
}

// idsAfter is up to limit keys of an index keyed by job id, after after.
func idsAfter(index *bolt.Bucket, after string, limit int) []string {
	var ids []string
	c := index.Cursor()
	for k, _ := seekAfter(c, after); k != nil && len(ids) < limit; k, _ = c.Next() {
		ids = append(ids, string(k))
	}
	return ids
}

// CancelQueued implements JobAdmin.
func (b *Bolt) CancelQueued(ctx context.Context, id, reason string) (*Job, error) {
	var out *Job
	err := b.update(ctx, "cancel job", func(tx *bolt.Tx) error {
		q := queueOf(tx)
		j, err := q.get(id)
		if err != nil {
			return err
		}
		if j.State != JobQueued {
			return fmt.Errorf("job %s is %s: %w", id, j.State, ErrNotQueued)
		}
		if err := q.unqueue(j); err != nil {
			return err
		}
		now := b.now().UTC()
		j.State, j.LastError, j.UpdatedAt = JobDone, cancelledError(reason), now
		if err := q.finished.Put(finishedKey(now, j.ID), []byte{}); err != nil {
			return fmt.Errorf("index finished job: %w", err)
		}
		if err := q.put(j); err != nil {
			return err
		}
		out = j
		return q.endCoalesced(j, now)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// unqueue takes a queued job out of the delayed index (waiting for its
// retry) or the queued one, and out of the queue depth.
func (q queue) unqueue(j *Job) error {
	if !j.NotBefore.IsZero() {
		k := finishedKey(j.NotBefore.UTC(), j.ID)
		if v := clone(q.delayed.Get(k)); v != nil {
			if err := q.delayed.Delete(k); err != nil {
				return fmt.Errorf("unindex delayed job: %w", err)
			}
			// and out of its lane's delayed index, which would hold the
			// lane back until the next open
			if err := q.idx.delayed([]byte(j.ID), decodeSchedule(v), false); err != nil {
				return err
			}
			return putCount(q.meta, q.count()-1)
		}
	}
	return q.dequeueIndex([]byte(j.ID))
}

// RequeueFailed implements JobAdmin.
func (b *Bolt) RequeueFailed(ctx context.Context, id string) (*Job, error) {
	var out *Job
	err := b.update(ctx, "requeue failed job", func(tx *bolt.Tx) error {
		q := queueOf(tx)
		j, err := q.get(id)
		if err != nil {
			return err
		}
		if j.State != JobFailed {
			return fmt.Errorf("job %s is %s: %w", id, j.State, ErrNotQueued)
		}
		// finish indexed it at the time it ended, which is its UpdatedAt.
		if err := q.finished.Delete(finishedKey(j.UpdatedAt, j.ID)); err != nil {
			return fmt.Errorf("unindex finished job: %w", err)
		}
		j.State, j.Attempts, j.Owner, j.UpdatedAt = JobQueued, 0, "", b.now().UTC()
		j.NotBefore, j.LeaseUntil = time.Time{}, time.Time{}
		if err := q.enqueueIndex(j); err != nil {
			return err
		}
		out = j
		return q.put(j)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
