package applyqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/shardgate/shardgate/store"
)

// heldLease is what this process knows of a job it acquired: the fencing
// token it got, and until when the lease surely lasts by this process's
// clock (from the start of the last write that renewed it).
type heldLease struct {
	fence uint64
	until time.Time
}

// ensureCounters creates the Seq and fence counters once, so that the
// transactions that bump them always find (and lock) them.
func (q *Queue) ensureCounters(ctx context.Context) error {
	if q.countersReady.Load() {
		return nil
	}
	for _, key := range []string{applySeqKey, applyFenceKey} {
		err := q.st.Update(ctx, applySeqBucket, key, func(old []byte) ([]byte, error) {
			if old == nil {
				return []byte("0"), nil
			}
			return old, nil
		})
		if err != nil {
			return fmt.Errorf("create apply counter %s: %w", key, err)
		}
	}
	q.countersReady.Store(true)
	return nil
}

// bump increments a counter inside tx and returns its new value.
func bump(tx store.RecordTx, key string) (uint64, error) {
	old, err := tx.Get(applySeqBucket, key)
	if err != nil {
		return 0, fmt.Errorf("read apply counter %s: %w", key, err)
	}
	n, err := strconv.ParseUint(string(old), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse apply counter %s: %w", key, err)
	}
	n++
	return n, tx.Put(applySeqBucket, key, []byte(strconv.FormatUint(n, 10)))
}

// mergeKey names a merge's apply of one project, for applyMergeBucket.
func mergeKey(j *Job) string {
	return j.Ref.Key() + "\x00" + j.Project + "\x00" + j.MergeSHA
}

// insert gives rec the next Seq and stores it, in one transaction with the
// counter: transactions that bump the counter commit in its order, so a
// later Seq never becomes visible before an earlier one. A new merge's job
// (no RetryOf) also claims its merge key, and a requeued copy the failed
// job's retry key: a second insert of either, from any process, is refused
// with ErrApplyExists (ErrExists from the store). The caller holds q.mu.
func (q *Queue) insert(ctx context.Context, rec *Job) error {
	if err := q.ensureCounters(ctx); err != nil {
		return err
	}
	now := q.clock()
	var stored Job
	err := q.st.Tx(ctx, func(tx store.RecordTx) error {
		n, err := bump(tx, applySeqKey)
		if err != nil {
			return err
		}
		stored = *cloneApply(rec)
		stored.Seq = fmt.Sprintf("%012d", n)
		stored.CreatedAt, stored.UpdatedAt = now, now
		switch {
		case stored.RetryOf != "":
			err = tx.Insert(applyRetryBucket, stored.RetryOf, []byte(stored.Seq))
		case stored.MergeSHA != "":
			err = tx.Insert(applyMergeBucket, mergeKey(&stored), []byte(stored.Seq))
		}
		if err != nil {
			return err
		}
		if err := tx.Insert(applyPRBucket, prIndexKey(&stored), []byte(stored.Seq)); err != nil {
			return err
		}
		return writeApply(tx, &stored)
	})
	if errors.Is(err, store.ErrExists) {
		return fmt.Errorf("%w (enqueued by another process)", ErrApplyExists)
	}
	if err != nil {
		return fmt.Errorf("store apply job: %w", err)
	}
	*rec = stored
	return nil
}

// takeLease writes the lease of a job already seen runnable, with the next
// fencing token, in one transaction that locks the job's record. The stream
// check need not be repeated: once no earlier unfinished job shares a
// stream with a job, none ever will (Seqs become visible in order, finished
// jobs stay finished, and Update cannot change Streams). Only the job's own
// record can have changed, so that is re-checked here.
func (q *Queue) takeLease(ctx context.Context, seq string) (*Job, error) {
	if err := q.ensureCounters(ctx); err != nil {
		return nil, fmt.Errorf("acquire apply job %s: %w", seq, err)
	}
	start := q.clock()
	var out *Job
	err := q.st.Tx(ctx, func(tx store.RecordTx) error {
		j, err := getApply(tx, seq)
		if err != nil {
			return err
		}
		if j.State.Finished() || leaseLive(j, q.clock()) {
			return ErrNotRunnable
		}
		fence, err := bump(tx, applyFenceKey)
		if err != nil {
			return err
		}
		j.LeaseOwner, j.LeaseUntil, j.Fence = q.owner, q.clock().Add(q.lease), fence
		j.Attempt++
		j.UpdatedAt = q.clock()
		out = j
		return writeApply(tx, j)
	})
	if err != nil {
		return nil, fmt.Errorf("acquire apply job %s: %w", seq, err)
	}
	q.heldMu.Lock()
	q.held[seq] = heldLease{fence: out.Fence, until: start.Add(q.lease)}
	q.heldMu.Unlock()
	return cloneApply(out), nil
}

func getApply(tx store.RecordTx, seq string) (*Job, error) {
	raw, err := tx.Get(applyBucket, seq)
	if err != nil {
		return nil, err
	}
	j := &Job{}
	if err := json.Unmarshal(raw, j); err != nil {
		return nil, fmt.Errorf("decode apply job: %w", err)
	}
	return j, nil
}

// holds checks that this process still holds j: it acquired it, and the
// fencing token stored in j is the one it got. An expired lease that no
// other process has taken is still this one's.
func (q *Queue) holds(j *Job) error {
	q.heldMu.Lock()
	h, ok := q.held[j.Seq]
	q.heldMu.Unlock()
	switch {
	case j.State.Finished() || j.LeaseOwner != q.owner || !ok:
		return ErrNotHolder
	case j.Fence != h.fence:
		return fmt.Errorf("%w (fencing token %d, the job's is %d)", ErrNotHolder, h.fence, j.Fence)
	}
	return nil
}

// renewed records a successful renewal that started at start.
func (q *Queue) renewed(seq string, start time.Time) {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	if h, ok := q.held[seq]; ok {
		h.until = start.Add(q.lease)
		q.held[seq] = h
	}
}

// drop forgets a job this process finished or lost.
func (q *Queue) drop(seq string) {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	delete(q.held, seq)
}

// Fenced checks, before a write outside the store that the holder of seq
// makes (a comment, a check run), that this process still holds the job:
// its lease has not run out by this process's clock since the last renewal
// (a process that was paused finds out here, before any database answer),
// and the stored job still carries its fencing token. ErrNotHolder
// otherwise: the write must not be made.
func (q *Queue) Fenced(ctx context.Context, seq string) error {
	q.heldMu.Lock()
	h, ok := q.held[seq]
	q.heldMu.Unlock()
	if !ok {
		return fmt.Errorf("apply job %s: %w", seq, ErrNotHolder)
	}
	if now := q.clock(); !now.Before(h.until) {
		return fmt.Errorf("apply job %s: %w (its lease ran out %s ago without a renewal)", seq, ErrNotHolder,
			now.Sub(h.until).Round(time.Millisecond))
	}
	raw, err := q.st.Get(ctx, applyBucket, seq)
	if err != nil {
		return fmt.Errorf("apply job %s: %w", seq, err)
	}
	j := &Job{}
	if err := json.Unmarshal(raw, j); err != nil {
		return fmt.Errorf("apply job %s: decode: %w", seq, err)
	}
	if err := q.holds(j); err != nil {
		return fmt.Errorf("apply job %s: %w", seq, err)
	}
	return nil
}

// PutFenced stores a record that the holder of seq writes (the audit
// record), in one transaction with the check that it still holds the job:
// ErrNotHolder, and nothing stored, once another process took it over.
func (q *Queue) PutFenced(ctx context.Context, seq, bucket, key string, value []byte) error {
	err := q.st.Tx(ctx, func(tx store.RecordTx) error {
		j, err := getApply(tx, seq)
		if err != nil {
			return err
		}
		if err := q.holds(j); err != nil {
			return err
		}
		return tx.Put(bucket, key, value)
	})
	if err != nil {
		return fmt.Errorf("write %s for apply job %s: %w", bucket, seq, err)
	}
	return nil
}
