package applyqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shardgate/shardgate/store"
)

// Requeue retries a failed job (/shardgate apply): a copy goes to the end of
// the order under a new Seq, queued, with reason, progress and attempts
// cleared, and the failed record is deleted. The copy is written first and
// names the failed one in RetryOf (and applyRetryBucket maps the failed Seq
// to it), which hides it: after a crash in between, the failed record is
// neither listed nor requeued twice, and the next Requeue of it finishes the
// deletion and returns the same copy.
func (q *Queue) Requeue(ctx context.Context, seq string) (*Job, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.ensureIndexes(ctx); err != nil {
		return nil, fmt.Errorf("requeue apply job %s: %w", seq, err)
	}
	if cp, err := q.requeuedCopy(ctx, seq); err == nil {
		if err := q.deleteReplaced(ctx, seq); err != nil {
			return nil, fmt.Errorf("requeue apply job %s: %w", seq, err)
		}
		return cp, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("requeue apply job %s: %w", seq, err)
	}
	raw, err := q.st.Get(ctx, applyBucket, seq)
	if err != nil {
		return nil, fmt.Errorf("requeue apply job %s: %w", seq, err)
	}
	old := &Job{}
	if err := json.Unmarshal(raw, old); err != nil {
		return nil, fmt.Errorf("requeue apply job %s: decode: %w", seq, err)
	}
	if old.State != Failed {
		return nil, fmt.Errorf("requeue apply job %s: %w (it is %s)", seq, ErrNotFailed, old.State)
	}
	rec := cloneApply(old)
	rec.State, rec.Reason, rec.Progress, rec.Attempt = Queued, "", "", 0
	rec.LeaseOwner, rec.LeaseUntil, rec.RetryOf, rec.Fence = "", time.Time{}, seq, 0
	if err := q.insert(ctx, rec); errors.Is(err, ErrApplyExists) {
		// Another process requeued it at the same moment: its copy stands.
		cp, err := q.requeuedCopy(ctx, seq)
		if err != nil {
			return nil, fmt.Errorf("requeue apply job %s: requeued by another process: %w", seq, err)
		}
		return cp, nil
	} else if err != nil {
		return nil, fmt.Errorf("requeue apply job %s: %w", seq, err)
	}
	if err := q.deleteReplaced(ctx, seq); err != nil {
		return nil, fmt.Errorf("requeue apply job %s: %w", seq, err)
	}
	return rec, nil
}

// requeuedCopy returns the copy a Requeue of seq made; store.ErrNotFound
// when there is none.
func (q *Queue) requeuedCopy(ctx context.Context, seq string) (*Job, error) {
	cp, err := q.st.Get(ctx, applyRetryBucket, seq)
	if err != nil {
		return nil, err
	}
	raw, err := q.st.Get(ctx, applyBucket, string(cp))
	if err != nil {
		return nil, fmt.Errorf("its copy %s: %w", cp, err)
	}
	j := &Job{}
	if err := json.Unmarshal(raw, j); err != nil {
		return nil, fmt.Errorf("decode its copy %s: %w", cp, err)
	}
	return j, nil
}

// deleteReplaced deletes the failed record a requeued copy replaced, with
// its index entries.
func (q *Queue) deleteReplaced(ctx context.Context, seq string) error {
	err := q.st.Tx(ctx, func(tx store.RecordTx) error { return deleteSeq(tx, seq) })
	if err != nil {
		return fmt.Errorf("delete the failed record: %w", err)
	}
	return nil
}
