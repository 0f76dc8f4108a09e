package applyqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/shardgate/shardgate/store"
)

// applyIndexKey (in applySeqBucket) is set once applyLiveBucket and
// applyPRBucket cover every job: a queue written before they existed gets
// them built once, by the first process that needs them.
const applyIndexKey = "indexed"

// prIndexKey is j's key in applyPRBucket.
func prIndexKey(j *Job) string { return j.Ref.Key() + "\x00" + j.Seq }

// writeApply stores j and its live copy in tx: the copy while j is
// unfinished, none once it has finished. Every write of a job's record
// goes through it, so the live index is the unfinished jobs exactly.
func writeApply(tx store.RecordTx, j *Job) error {
	raw, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encode apply job: %w", err)
	}
	if err := tx.Put(applyBucket, j.Seq, raw); err != nil {
		return err
	}
	if j.State.Finished() {
		return tx.Delete(applyLiveBucket, j.Seq)
	}
	return tx.Put(applyLiveBucket, j.Seq, raw)
}

// deleteApply removes j's record and its index entries in tx.
func deleteApply(tx store.RecordTx, j *Job) error {
	for _, r := range [][2]string{{applyBucket, j.Seq}, {applyLiveBucket, j.Seq}, {applyPRBucket, prIndexKey(j)}} {
		if err := tx.Delete(r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

// ensureIndexes builds the live and pull-request indexes of a queue written
// before them, once: every job is re-written through writeApply in a
// transaction of its own, which locks its record, so a job changed meanwhile
// by another process is indexed as it is now. Processes that do it at once
// do the same writes.
func (q *Queue) ensureIndexes(ctx context.Context) error {
	if q.indexed.Load() {
		return nil
	}
	if _, err := q.st.Get(ctx, applySeqBucket, applyIndexKey); err == nil {
		q.indexed.Store(true)
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("read apply index marker: %w", err)
	}
	kvs, err := q.st.List(ctx, applyBucket, "")
	if err != nil {
		return fmt.Errorf("index apply jobs: %w", err)
	}
	for _, kv := range kvs {
		err := q.st.Tx(ctx, func(tx store.RecordTx) error {
			j, err := getApply(tx, kv.Key)
			if errors.Is(err, store.ErrNotFound) {
				return nil // deleted meanwhile
			}
			if err != nil {
				return err
			}
			if err := writeApply(tx, j); err != nil {
				return err
			}
			return tx.Put(applyPRBucket, prIndexKey(j), []byte(j.Seq))
		})
		if err != nil {
			return fmt.Errorf("index apply job %s: %w", kv.Key, err)
		}
	}
	if err := q.st.Put(ctx, applySeqBucket, applyIndexKey, []byte("1")); err != nil {
		return fmt.Errorf("mark apply jobs indexed: %w", err)
	}
	q.indexed.Store(true)
	return nil
}

// loadLive reads the unfinished jobs in Seq order from their index. The jobs
// are shared with the cache: callers clone what they return. An index entry
// whose job has finished since it was read is left out. The caller holds q.mu.
func (q *Queue) loadLive(ctx context.Context) ([]*Job, error) {
	if err := q.ensureIndexes(ctx); err != nil {
		return nil, err
	}
	kvs, err := q.st.List(ctx, applyLiveBucket, "")
	if err != nil {
		return nil, err
	}
	q.cacheMu.Lock()
	defer q.cacheMu.Unlock()
	seen := make(map[string]bool, len(kvs))
	jobs := make([]*Job, 0, len(kvs))
	for _, kv := range kvs {
		seen[kv.Key] = true
		c, ok := q.cache[kv.Key]
		if !ok || !bytes.Equal(c.raw, kv.Value) {
			j := &Job{}
			if err := json.Unmarshal(kv.Value, j); err != nil {
				return nil, fmt.Errorf("decode apply job %s: %w", kv.Key, err)
			}
			c = cachedApply{raw: kv.Value, job: j}
			q.cache[kv.Key] = c
		}
		if !c.job.State.Finished() {
			jobs = append(jobs, c.job)
		}
	}
	for k := range q.cache {
		if !seen[k] {
			delete(q.cache, k)
		}
	}
	return jobs, nil
}

// loadAll reads every job kept in Seq order, leaving out records a Requeue
// replaced (see Requeue); the jobs are the caller's. The caller holds q.mu.
func (q *Queue) loadAll(ctx context.Context) ([]*Job, error) {
	kvs, err := q.st.List(ctx, applyBucket, "")
	if err != nil {
		return nil, err
	}
	jobs := make([]*Job, 0, len(kvs))
	replaced := map[string]bool{}
	for _, kv := range kvs {
		j := &Job{}
		if err := json.Unmarshal(kv.Value, j); err != nil {
			return nil, fmt.Errorf("decode apply job %s: %w", kv.Key, err)
		}
		if j.RetryOf != "" {
			replaced[j.RetryOf] = true
		}
		jobs = append(jobs, j)
	}
	return slices.DeleteFunc(jobs, func(j *Job) bool { return replaced[j.Seq] }), nil
}
