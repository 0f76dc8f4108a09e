package applyqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shardgate/shardgate/store"
)

// unapplied are the current jobs of j's After projects in j's merge that are
// not applied (a requeued job stands for the failed one it replaced). A
// project the merge has no job for holds nothing. The caller holds q.mu.
func (q *Queue) unapplied(ctx context.Context, j *Job) ([]*Job, error) {
	var out []*Job
	for _, project := range j.After {
		if j.MergeSHA == "" {
			break
		}
		raw, err := q.st.Get(ctx, applyMergeBucket, mergeKey(&Job{Ref: j.Ref, Project: project, MergeSHA: j.MergeSHA}))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the apply of %s before %s: %w", project, j.Project, err)
		}
		seq := string(raw)
		// Follow retries: each requeue replaced a failed job with a copy.
		for range 1000 {
			next, err := q.st.Get(ctx, applyRetryBucket, seq)
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("the apply of %s before %s: %w", project, j.Project, err)
			}
			seq = string(next)
		}
		raw, err = q.st.Get(ctx, applyBucket, seq)
		if errors.Is(err, store.ErrNotFound) {
			continue // pruned
		}
		if err != nil {
			return nil, fmt.Errorf("the apply of %s before %s: %w", project, j.Project, err)
		}
		dep := &Job{}
		if err := json.Unmarshal(raw, dep); err != nil {
			return nil, fmt.Errorf("decode apply job %s: %w", seq, err)
		}
		if dep.State != Applied {
			out = append(out, dep)
		}
	}
	return out, nil
}
