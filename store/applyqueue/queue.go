package applyqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/store"
)

// DefaultLease is how long an apply job stays held by its process without
// a renewal, and so how long a dead process keeps its streams locked.
const DefaultLease = 2 * time.Minute

// Errors callers of the apply queue branch on.
var (
	// ErrNotRunnable: Acquire of a job that is finished, waits behind an
	// earlier job on one of its streams, or is leased by a live owner.
	ErrNotRunnable = errors.New("apply job is not runnable")
	// ErrNotHolder: Renew, Update or Finish by a process that does not hold
	// the job's lease (another process took it over after the lease expired).
	ErrNotHolder = errors.New("apply job is not held by this process")
	// ErrNotFailed: Requeue of a job that has not failed.
	ErrNotFailed = errors.New("apply job has not failed")
	// ErrApplyExists: Enqueue of a job for a pull request, project and merge
	// commit that the queue already holds, in any state (the merge event was
	// handled twice, e.g. again after a crash). Nothing was stored.
	ErrApplyExists = errors.New("apply job already enqueued")
)

const (
	applyBucket    = "applies"     // Seq → Job JSON
	applySeqBucket = "applies_seq" // applySeqKey → last Seq handed out, applyFenceKey → last fencing token
	applySeqKey    = "last"
	applyFenceKey  = "fence"
	// applyMergeBucket holds one record per enqueued merge (Ref, Project,
	// MergeSHA → Seq), so that replicas handling one merge event at once
	// enqueue it once; applyRetryBucket one per requeued failed job.
	applyMergeBucket = "applies_merge"
	applyRetryBucket = "applies_retry"
	// applyLiveBucket holds a copy of every unfinished job's record (Seq →
	// Job JSON), written in the transaction that writes the job: the
	// scheduler's scans read it alone, so they grow with the live jobs, not
	// with the history. applyPRBucket indexes every job by pull request
	// (pullreq.Ref.Key, NUL, Seq → Seq) for ListForPR.
	applyLiveBucket = "applies_live"
	applyPRBucket   = "applies_pr"
)

// applyLocks holds one lock per store, shared by every Queue on it (a
// restarted scheduler in tests opens a second queue on the same store).
var applyLocks sync.Map // store.Store → *sync.RWMutex

// Queue is the persisted, merge-ordered list of apply jobs and the
// stream locks they imply: a job holds every stream in its Streams from the
// moment it is acquired until it finishes, and waits behind every earlier
// unfinished job that shares a stream.
//
// The locks are not stored apart from the jobs: they follow from the order
// and the states, so there is nothing to release by hand and nothing that can
// disagree with the jobs after a crash. Only the lease (which process runs a
// job) is held, and it expires on its own.
//
// Several processes may share the queue (replicas on one PostgreSQL store).
// A Seq is handed out and its job stored in one transaction (store.Tx), so
// Seqs become visible in order: a scan never sees a job without every
// earlier one, and a job seen runnable stays free of earlier jobs. Acquire
// then needs only its own record's check and lease write in one
// transaction. Each acquisition carries a fencing token (Fence), increasing
// across the queue, and every write the holder makes is checked against the
// token stored in the job, so a process that lost the job (paused past its
// lease, partitioned) cannot update, report or finish it once another took
// it over. An in-process lock keeps this process's own scans and inserts
// apart as before.
type Queue struct {
	st    store.Store
	owner string
	lease time.Duration
	now   func() time.Time
	mu    *sync.RWMutex

	// held are the jobs this process acquired and not yet finished or lost:
	// their fencing token and how long the lease surely lasts.
	heldMu sync.Mutex
	held   map[string]heldLease
	// countersReady is set once the counters exist (ensureCounters),
	// indexed once the indexes cover every job (ensureIndexes).
	countersReady, indexed atomic.Bool

	// cache keeps decoded records by Seq with the bytes they came from, so a
	// scan decodes only what changed.
	cacheMu sync.Mutex
	cache   map[string]cachedApply
}

type cachedApply struct {
	raw []byte
	job *Job
}

// New returns the queue kept in st. owner names this process in
// leases and must differ between processes running at the same time; lease
// (DefaultLease when not positive) is how long a job stays held without
// a renewal; now is the clock (time.Now when nil).
func New(st store.Store, owner string, lease time.Duration, now func() time.Time) *Queue {
	if lease <= 0 {
		lease = DefaultLease
	}
	if now == nil {
		now = time.Now
	}
	mu, _ := applyLocks.LoadOrStore(st, &sync.RWMutex{})
	return &Queue{st: st, owner: owner, lease: lease, now: now, mu: mu.(*sync.RWMutex),
		cache: map[string]cachedApply{}, held: map[string]heldLease{}}
}

// Owner is the name this queue leases jobs under.
func (q *Queue) Owner() string { return q.owner }

// Lease is how long an acquired job stays held without a renewal.
func (q *Queue) Lease() time.Duration { return q.lease }

// Enqueue persists job at the end of the order and fills in its Seq, State
// (queued), times and normalised Streams; lease, attempt, reason and progress
// start empty whatever the caller set. job is only changed when it was stored.
// A second job with the same Ref, Project and a non-empty MergeSHA is refused
// with ErrApplyExists, so a merge event handled again after a crash does not
// apply twice.
func (q *Queue) Enqueue(ctx context.Context, job *Job) error {
	if job == nil {
		return errors.New("enqueue apply job: job is nil")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.ensureIndexes(ctx); err != nil {
		return fmt.Errorf("enqueue apply job: %w", err)
	}
	rec := cloneApply(job)
	rec.Streams = normalizeStreams(job.Streams)
	rec.State, rec.Reason, rec.Progress, rec.Attempt = Queued, "", "", 0
	rec.LeaseOwner, rec.LeaseUntil, rec.RetryOf, rec.Fence = "", time.Time{}, "", 0
	if err := q.insert(ctx, rec); errors.Is(err, ErrApplyExists) {
		seq, _ := q.st.Get(ctx, applyMergeBucket, mergeKey(rec))
		return fmt.Errorf("enqueue apply job %s %s: %w (seq %s)", job.Project, job.MergeSHA, ErrApplyExists, seq)
	} else if err != nil {
		return fmt.Errorf("enqueue apply job: %w", err)
	}
	*job = *cloneApply(rec)
	return nil
}

// Get returns one job; an unknown (or requeued-away) Seq is store.ErrNotFound.
func (q *Queue) Get(ctx context.Context, seq string) (*Job, error) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	raw, err := q.st.Get(ctx, applyBucket, seq)
	if err != nil {
		return nil, fmt.Errorf("get apply job %s: %w", seq, err)
	}
	job := &Job{}
	if err := json.Unmarshal(raw, job); err != nil {
		return nil, fmt.Errorf("get apply job %s: decode: %w", seq, err)
	}
	replaced, err := q.replaced(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("get apply job %s: %w", seq, err)
	}
	if replaced {
		return nil, fmt.Errorf("get apply job %s: %w", seq, store.ErrNotFound)
	}
	return job, nil
}

// replaced says whether j is a failed job whose Requeue was cut short
// after its copy was written: the copy stands for it (see Requeue).
func (q *Queue) replaced(ctx context.Context, j *Job) (bool, error) {
	if j.State != Failed {
		return false, nil
	}
	_, err := q.st.Get(ctx, applyRetryBucket, j.Seq)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	return false, err
}

// List returns every job kept, finished ones included, in Seq (merge)
// order. It reads the whole history (what Prune left of it): the
// scheduler's paths read the live jobs only.
func (q *Queue) List(ctx context.Context) ([]*Job, error) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	jobs, err := q.loadAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("list apply jobs: %w", err)
	}
	return jobs, nil
}

// Live returns the unfinished jobs in Seq (merge) order, read through the
// live index: finished jobs are not read. For the status page; the
// scheduler's own scans are Runnable and Blockers.
func (q *Queue) Live(ctx context.Context) ([]*Job, error) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	jobs, err := q.loadLive(ctx)
	if err != nil {
		return nil, fmt.Errorf("list live apply jobs: %w", err)
	}
	out := make([]*Job, len(jobs))
	for i, j := range jobs {
		out[i] = cloneApply(j)
	}
	return out, nil
}

// LastSeq is the Seq handed out last ("" before the first job): the
// newest job, finished or not.
func (q *Queue) LastSeq(ctx context.Context) (string, error) {
	raw, err := q.st.Get(ctx, applySeqBucket, applySeqKey)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the last apply job seq: %w", err)
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return "", fmt.Errorf("read the last apply job seq: %w", err)
	}
	if n == 0 {
		return "", nil
	}
	return fmt.Sprintf("%012d", n), nil
}

// ListForPR returns the jobs of one pull request in Seq order, read through
// the index by pull request: the other pull requests' jobs are not read.
func (q *Queue) ListForPR(ctx context.Context, ref pullreq.Ref) ([]*Job, error) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if err := q.ensureIndexes(ctx); err != nil {
		return nil, fmt.Errorf("list apply jobs of %s: %w", ref, err)
	}
	kvs, err := q.st.List(ctx, applyPRBucket, ref.Key()+"\x00")
	if err != nil {
		return nil, fmt.Errorf("list apply jobs of %s: %w", ref, err)
	}
	out := []*Job{}
	for _, kv := range kvs {
		raw, err := q.st.Get(ctx, applyBucket, string(kv.Value))
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted by a Requeue or Prune since the index was read
		}
		if err != nil {
			return nil, fmt.Errorf("list apply jobs of %s: %w", ref, err)
		}
		j := &Job{}
		if err := json.Unmarshal(raw, j); err != nil {
			return nil, fmt.Errorf("list apply jobs of %s: decode %s: %w", ref, kv.Value, err)
		}
		if hidden, err := q.replaced(ctx, j); err != nil {
			return nil, fmt.Errorf("list apply jobs of %s: %w", ref, err)
		} else if !hidden && j.Ref == ref {
			out = append(out, j)
		}
	}
	return out, nil
}

// clock is the queue's time as it reads back from the store: UTC, without a
// monotonic reading, so a returned job equals the stored one.
func (q *Queue) clock() time.Time { return q.now().UTC().Round(0) }

// locks are the job's streams and, when it names one, its state; a state's
// lock name cannot be a stream's (a stream key has no NUL).
func (j *Job) locks() []string {
	if j.StateKey == "" {
		return j.Streams
	}
	return append(slices.Clip(j.Streams), stateLock(j.StateKey))
}

func stateLock(key string) string { return "state\x00" + key }

func normalizeStreams(in []string) []string {
	out := slices.DeleteFunc(slices.Clone(in), func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

func cloneApply(j *Job) *Job {
	c := *j
	c.Streams = slices.Clone(j.Streams)
	return &c
}
