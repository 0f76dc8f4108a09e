package applyqueue

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
)

// Runnable returns, in Seq order, the unfinished jobs that no earlier
// unfinished job shares a stream with and that no live lease holds: the jobs
// that may start now. A job whose holder stopped renewing is runnable again
// once its lease has expired, whoever held it: this process too, as after a
// restart under the same owner name (the scheduler never starts a job twice
// itself).
func (q *Queue) Runnable(ctx context.Context) ([]*Job, error) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	jobs, err := q.loadLive(ctx)
	if err != nil {
		return nil, fmt.Errorf("list runnable apply jobs: %w", err)
	}
	out := runnableApplies(jobs, q.clock())
	ready := out[:0]
	for _, j := range out {
		deps, err := q.unapplied(ctx, j)
		if err != nil {
			return nil, fmt.Errorf("list runnable apply jobs: %w", err)
		}
		if len(deps) == 0 {
			ready = append(ready, cloneApply(j))
		}
	}
	return ready, nil
}

// runnableApplies walks jobs in order, marking the locks (streams and state)
// of every unfinished job busy for all later ones, whether it runs or waits:
// a later job never overtakes an earlier one on a stream or a state, and as a
// job needs all its locks free at once, no two jobs can each hold a lock the
// other waits for.
func runnableApplies(jobs []*Job, now time.Time) []*Job {
	busy := map[string]bool{}
	var out []*Job
	for _, j := range jobs {
		if j.State.Finished() {
			continue
		}
		locks := j.locks()
		blocked := slices.ContainsFunc(locks, func(s string) bool { return busy[s] })
		for _, s := range locks {
			busy[s] = true
		}
		if !blocked && !leaseLive(j, now) {
			out = append(out, j)
		}
	}
	return out
}

func leaseLive(j *Job, now time.Time) bool {
	return j.LeaseOwner != "" && j.LeaseUntil.After(now)
}

// Blocker is an earlier unfinished job that a job waits behind on one stream,
// or on its Terraform state (Stream is then "").
type Blocker struct {
	Stream  string
	Seq     string
	Ref     pullreq.Ref
	Project string
	State   State
	// DependsOn says the job waits for this one, of its merge, to be applied
	// (Job.After), not for a lock; Reason is why it failed, if it did.
	DependsOn bool
	Reason    string
}

// Blockers returns, for each stream of the job and for its state, the
// earliest earlier unfinished job on it (the one in front of the line); locks
// that are free are left out, and a finished job has none.
func (q *Queue) Blockers(ctx context.Context, seq string) ([]Blocker, error) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	jobs, err := q.loadLive(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply job blockers %s: %w", seq, err)
	}
	i := slices.IndexFunc(jobs, func(j *Job) bool { return j.Seq == seq })
	if i < 0 {
		// Not live: finished (no blockers), or unknown.
		if _, err := q.st.Get(ctx, applyBucket, seq); err != nil {
			return nil, fmt.Errorf("apply job blockers %s: %w", seq, err)
		}
		return nil, nil
	}
	job := jobs[i]
	var out []Blocker
	for _, s := range job.locks() {
		for _, e := range jobs[:i] {
			if !e.State.Finished() && slices.Contains(e.locks(), s) {
				stream := s
				if s == stateLock(job.StateKey) {
					stream = ""
				}
				out = append(out, Blocker{Stream: stream, Seq: e.Seq, Ref: e.Ref, Project: e.Project, State: e.State})
				break
			}
		}
	}
	deps, err := q.unapplied(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("apply job blockers %s: %w", seq, err)
	}
	for _, d := range deps {
		out = append(out, Blocker{Seq: d.Seq, Ref: d.Ref, Project: d.Project, State: d.State, DependsOn: true, Reason: d.Reason})
	}
	return out, nil
}
