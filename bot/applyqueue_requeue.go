package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shardgate/shardgate/store"
)

// Requeue retries a failed job (/shardgate apply): a copy goes to the end of
// the order under a new Seq, queued, with reason, progress and attempts
// cleared, and the failed record is deleted. The copy is written first and
// names the failed one in RetryOf, which hides it: after a crash in between,
// the failed record is neither listed nor requeued twice, and the next
// Requeue of it finishes the deletion and returns the same copy.
func (q *ApplyQueue) Requeue(ctx context.Context, seq string) (*ApplyJob, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	jobs, err := q.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("requeue apply job %s: %w", seq, err)
	}
	if i := slices.IndexFunc(jobs, func(j *ApplyJob) bool { return j.RetryOf == seq }); i >= 0 {
		if err := q.st.Delete(ctx, applyBucket, seq); err != nil {
			return nil, fmt.Errorf("requeue apply job %s: delete the failed record: %w", seq, err)
		}
		return cloneApply(jobs[i]), nil
	}
	i := slices.IndexFunc(jobs, func(j *ApplyJob) bool { return j.Seq == seq })
	if i < 0 {
		return nil, fmt.Errorf("requeue apply job %s: %w", seq, store.ErrNotFound)
	}
	old := jobs[i]
	if old.State != ApplyFailed {
		return nil, fmt.Errorf("requeue apply job %s: %w (it is %s)", seq, ErrNotFailed, old.State)
	}
	rec := cloneApply(old)
	rec.State, rec.Reason, rec.Progress, rec.Attempt = ApplyQueued, "", "", 0
	rec.LeaseOwner, rec.LeaseUntil, rec.RetryOf, rec.Fence = "", time.Time{}, seq, 0
	if err := q.insert(ctx, rec); errors.Is(err, ErrApplyExists) {
		// Another process requeued it at the same moment: its copy stands.
		return q.requeuedCopy(ctx, seq)
	} else if err != nil {
		return nil, fmt.Errorf("requeue apply job %s: %w", seq, err)
	}
	if err := q.st.Delete(ctx, applyBucket, seq); err != nil {
		return nil, fmt.Errorf("requeue apply job %s: delete the failed record: %w", seq, err)
	}
	return rec, nil
}

// requeuedCopy returns the copy another process's Requeue of seq made.
func (q *ApplyQueue) requeuedCopy(ctx context.Context, seq string) (*ApplyJob, error) {
	jobs, err := q.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("requeue apply job %s: %w", seq, err)
	}
	if i := slices.IndexFunc(jobs, func(j *ApplyJob) bool { return j.RetryOf == seq }); i >= 0 {
		return cloneApply(jobs[i]), nil
	}
	return nil, fmt.Errorf("requeue apply job %s: requeued by another process, and its copy is gone", seq)
}

// Prune deletes the finished jobs last updated before cutoff, so that the
// scans behind Runnable and Blockers do not grow with the history; it returns
// how many it deleted. Unfinished jobs are never pruned, and Seqs are not
// reused (the counter is kept apart). A failed job pruned can no longer be
// retried with Requeue.
func (q *ApplyQueue) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kvs, err := q.st.List(ctx, applyBucket, "")
	if err != nil {
		return 0, fmt.Errorf("prune apply jobs: %w", err)
	}
	jobs, err := q.load(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune apply jobs: %w", err)
	}
	keep := map[string]bool{}
	for _, j := range jobs {
		keep[j.Seq] = !j.State.Finished() || !j.UpdatedAt.Before(cutoff)
	}
	n := 0
	for _, kv := range kvs {
		// A record load left out was replaced by a Requeue cut short.
		if keep[kv.Key] {
			continue
		}
		if err := q.st.Delete(ctx, applyBucket, kv.Key); err != nil {
			return n, fmt.Errorf("prune apply jobs: %w", err)
		}
		n++
	}
	return n, nil
}
