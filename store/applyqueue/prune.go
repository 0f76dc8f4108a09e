package applyqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shardgate/shardgate/store"
)

// Prune deletes the finished jobs last updated before cutoff, with their
// index entries and de-duplication records, so that what the queue keeps
// does not grow with the history; it returns how many it deleted. A failed
// record that a requeued copy replaced goes whatever its age. Unfinished
// jobs are never pruned, and Seqs are not reused (the counter is kept
// apart). A failed job pruned can no longer be retried with Requeue, and a
// merge whose job was pruned would be enqueued again if its event were
// handled again: keep them longer than GitHub redelivers
// (store.DeliveryRetention).
//
// It reads the whole history once (a pass an hour, see pruner); each job
// goes in a transaction of its own that re-checks it.
func (q *Queue) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.ensureIndexes(ctx); err != nil {
		return 0, fmt.Errorf("prune apply jobs: %w", err)
	}
	kvs, err := q.st.List(ctx, applyBucket, "")
	if err != nil {
		return 0, fmt.Errorf("prune apply jobs: %w", err)
	}
	n := 0
	for _, kv := range kvs {
		var j Job
		if json.Unmarshal(kv.Value, &j) == nil && (!j.State.Finished() || (j.State != Failed && !j.UpdatedAt.Before(cutoff))) {
			continue // kept, as pruneOne would find: no transaction for it
		}
		pruned, err := q.pruneOne(ctx, kv.Key, cutoff)
		if err != nil {
			return n, fmt.Errorf("prune apply job %s: %w", kv.Key, err)
		}
		if pruned {
			n++
		}
	}
	return n, nil
}

// pruneOne deletes one job if Prune should.
func (q *Queue) pruneOne(ctx context.Context, seq string, cutoff time.Time) (bool, error) {
	pruned := false
	err := q.st.Tx(ctx, func(tx store.RecordTx) error {
		pruned = false
		j, err := getApply(tx, seq)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.Get(applyRetryBucket, j.Seq)
		replaced := err == nil
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if !j.State.Finished() || (!replaced && !j.UpdatedAt.Before(cutoff)) {
			return nil
		}
		if err := deleteApply(tx, j); err != nil {
			return err
		}
		pruned = true
		if replaced {
			return nil // its copy keeps the merge's record
		}
		if j.RetryOf != "" {
			// The record it replaced goes first (a Requeue cut short left it).
			if err := deleteSeq(tx, j.RetryOf); err != nil {
				return err
			}
			if err := tx.Delete(applyRetryBucket, j.RetryOf); err != nil {
				return err
			}
		}
		if j.MergeSHA == "" {
			return nil
		}
		return tx.Delete(applyMergeBucket, mergeKey(j))
	})
	return pruned, err
}

// deleteSeq deletes the job seq, if it is there, with its index entries.
func deleteSeq(tx store.RecordTx, seq string) error {
	j, err := getApply(tx, seq)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return deleteApply(tx, j)
}
