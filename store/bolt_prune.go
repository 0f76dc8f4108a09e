package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// pruneChunk bounds one pruning transaction, so a large backlog does not hold
// the single writer lock (and so intake) for long.
const pruneChunk = 500

// PruneDone deletes the jobs that finished (done or failed) before olderThan,
// with their payloads and delivery records, and returns how many it deleted.
// Queued and running jobs are never touched.
//
// A delivery record is what refuses a GitHub redelivery, and GitHub may
// redeliver for DeliveryRetention (7 days): pass a time at least that far in
// the past, such as time.Now().Add(-DeliveryRetention), or a late redelivery
// of a pruned job would run again.
func (b *Bolt) PruneDone(ctx context.Context, olderThan time.Time) (int, error) {
	if !olderThan.After(time.Unix(0, 0)) {
		return 0, nil // nothing finished before the epoch; and UnixNano would overflow
	}
	limit := binary.BigEndian.AppendUint64(nil, uint64(olderThan.UnixNano()))
	total := 0
	for {
		n := 0
		err := b.update(ctx, "prune finished jobs", func(tx *bolt.Tx) error {
			var err error
			n, err = pruneSome(queueOf(tx), limit)
			return err
		})
		total += n
		if err != nil {
			return total, err
		}
		if n < pruneChunk {
			return total, nil
		}
	}
}

// pruneSome deletes up to pruneChunk finished jobs whose finished key sorts
// before limit.
func pruneSome(q queue, limit []byte) (int, error) {
	var keys [][]byte
	c := q.finished.Cursor()
	for k, _ := c.First(); k != nil && len(keys) < pruneChunk; k, _ = c.Next() {
		if len(k) < 8 || bytes.Compare(k[:8], limit) >= 0 {
			break
		}
		keys = append(keys, clone(k))
	}
	for _, k := range keys {
		if err := q.finished.Delete(k); err != nil {
			return 0, fmt.Errorf("unindex finished job: %w", err)
		}
		if err := q.deleteFinished(string(k[8:])); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// deleteFinished removes one finished job and the records that belong to it.
func (q queue) deleteFinished(id string) error {
	j, err := q.get(id)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.State != JobDone && j.State != JobFailed {
		// Only a job that finished is indexed there; anything else means the
		// index is stale, and the job is left to run.
		return nil
	}
	if j.DeliveryID != "" {
		// Only this job's record: the id may have been reused by a later job
		// after an earlier prune.
		var d delivery
		if v := q.deliveries.Get([]byte(j.DeliveryID)); v != nil && json.Unmarshal(v, &d) == nil && d.JobID == id {
			if err := q.deliveries.Delete([]byte(j.DeliveryID)); err != nil {
				return fmt.Errorf("delete delivery of job %s: %w", id, err)
			}
		}
	}
	if err := q.payloads.Delete([]byte(id)); err != nil {
		return fmt.Errorf("delete payload of job %s: %w", id, err)
	}
	if err := q.jobs.Delete([]byte(id)); err != nil {
		return fmt.Errorf("delete job %s: %w", id, err)
	}
	return nil
}
