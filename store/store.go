// Package store keeps shardgate's durable state: the job queue with delivery
// de-duplication, and keyed records (plan results, attestations, label events,
// comment ids) that survive a restart.
//
// Bolt is the embedded single-process default (one bbolt file); Postgres
// lets several replicas share one database, each claim of a job a lease the
// claimer renews (Heartbeat) and another replica takes over once it expired
// (ReclaimExpired).
package store

import (
	"context"
	"errors"
	"time"
)

// Errors callers branch on.
var (
	// ErrDuplicate: a job with this delivery id was already enqueued; nothing was stored.
	ErrDuplicate = errors.New("store: delivery already enqueued")
	// ErrQueueFull: the queue holds its maximum of queued jobs; nothing was stored.
	ErrQueueFull = errors.New("store: queue is full")
	// ErrNotFound: no such job or key.
	ErrNotFound = errors.New("store: not found")
	// ErrNotRunning: Complete or Release of a job that is not running, such as
	// one finished twice or handed back after RecoverRunning requeued it.
	ErrNotRunning = errors.New("store: job is not running")
	// ErrExists: RecordTx.Insert of a key that is already stored.
	ErrExists = errors.New("store: record already exists")
	// ErrLeaseLost: Heartbeat of a job that is no longer running for that
	// owner — it finished, was handed back, or its lease expired and it was
	// taken over — or Complete, Release or Retry of a job another owner
	// runs now. The owner must stop working on it and report nothing.
	ErrLeaseLost = errors.New("store: job lease lost")
)

// JobState is where a job is in its life.
type JobState string

const (
	JobQueued  JobState = "queued"
	JobRunning JobState = "running"
	JobDone    JobState = "done"
	JobFailed  JobState = "failed"
)

// Job is one unit of work: a webhook delivery, or work the bot scheduled itself.
type Job struct {
	// ID is assigned by Enqueue, in arrival order; Claim takes jobs by it
	// within the fairness rules (see Claim).
	ID string `json:"id"`
	// DeliveryID is GitHub's X-GitHub-Delivery; when set, a second Enqueue of
	// the same id is refused with ErrDuplicate.
	DeliveryID string `json:"delivery_id,omitempty"`
	// Kind tells the worker what to do ("event" for a webhook).
	Kind string `json:"kind"`
	// Event is the X-GitHub-Event of a webhook job.
	Event     string   `json:"event,omitempty"`
	Payload   []byte   `json:"payload,omitempty"`
	State     JobState `json:"state"`
	Attempts  int      `json:"attempts"`
	LastError string   `json:"last_error,omitempty"`
	// NotBefore is when a job handed back by Retry may be claimed again.
	NotBefore time.Time `json:"not_before,omitempty"`
	Owner     string    `json:"owner,omitempty"`
	// LeaseUntil is when a running job's claim expires unless its owner
	// renews it with Heartbeat; zero on a single-process store (Bolt), where
	// a claim lasts as long as the process.
	LeaseUntil time.Time `json:"lease_until,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`

	// Installation, Lane and CoalesceKey are the job's scheduling identity,
	// set by the enqueuer (intake reads them from the webhook payload) and
	// kept as given; zero values mean no identity. Claim runs at most one
	// job of a Lane (a pull request, "owner/repo#N") at a time, oldest
	// first, and prefers the Installation with the fewest running jobs.
	Installation int64  `json:"installation,omitempty"`
	Lane         string `json:"lane,omitempty"`
	// CoalesceKey: queued jobs with the same key are one piece of work.
	// Claim takes the due ones that never ran along with the job it claims,
	// marks them done with CoalescedInto naming it, and lists them (with
	// their payloads) in the claimed job's Coalesced.
	CoalesceKey   string `json:"coalesce_key,omitempty"`
	CoalescedInto string `json:"coalesced_into,omitempty"`
	// Priority: Claim takes a due queued job of a higher priority before
	// any of a lower one (whatever their installations run), within the
	// lane rule; 0 is the normal one (and below 0 counts as 0).
	Priority int `json:"priority,omitempty"`
	// Coalesced is filled by Claim: every job ever coalesced into this one,
	// oldest first, also those of an earlier claim that did not finish (a
	// crash, a retry), so the claimer can answer for all of them.
	Coalesced []*Job `json:"-"`

	// merged is the ids in Coalesced as Bolt keeps them in the job record.
	merged []string
}

// RecordTx reads and writes records inside Store.Tx. Get locks what it
// reads until the transaction ends (on PostgreSQL a row lock; Bolt has one
// writer at a time), so a check made on a record holds for the writes that
// follow it. Transactions that write in the same order commit in that order:
// a record appended after a counter was bumped in one transaction is seen by
// readers no earlier than the bump.
type RecordTx interface {
	// Get returns a record's value, or ErrNotFound.
	Get(bucket, key string) ([]byte, error)
	// Put stores a record, creating its bucket on first use.
	Put(bucket, key string, value []byte) error
	// Insert stores a record that must not exist yet: ErrExists when it
	// does, or when another transaction creates it first.
	Insert(bucket, key string, value []byte) error
	// Delete removes a record; an absent one is not an error.
	Delete(bucket, key string) error
}

// KV is one keyed record.
type KV struct {
	Key   string
	Value []byte
}

// Store is the durable state. Implementations are safe for concurrent use.
type Store interface {
	// Enqueue persists a queued job and fills its ID, State and times. It fails
	// with ErrDuplicate for a delivery id already seen and with ErrQueueFull when
	// maxQueued (> 0) jobs are already queued; in both cases nothing is stored.
	// Attempts, Owner, LastError, NotBefore and LeaseUntil start empty
	// whatever the caller set; job is only filled in when the job was stored.
	Enqueue(ctx context.Context, job *Job, maxQueued int) error
	// Claim marks a queued job that is due (NotBefore passed) running for
	// owner and returns it; it returns (nil, nil) when no job is due. The
	// job is fair: of a Lane only the oldest queued job may run, and only
	// while no other job of that Lane runs; among the jobs that may, it is
	// the oldest of the Installation with the fewest running jobs (jobs
	// without an Installation count as one with none running), so without
	// identities the claim is oldest first. Jobs coalesced into it are
	// taken in the same step (see Job.CoalesceKey). owner names one process: unique per process and start (host, pid
	// and a random part), since Heartbeat trusts it. On a shared store the
	// claim is a lease until LeaseUntil.
	Claim(ctx context.Context, owner string) (*Job, error)
	// Complete finishes a job running for owner (the name it was claimed
	// under): done when jobErr is nil, else failed with the error's text.
	// ErrNotRunning when it is not running, ErrLeaseLost when it runs for
	// another owner (taken over after its lease expired), ErrNotFound for an
	// unknown id; in each case nothing changes.
	Complete(ctx context.Context, id, owner string, jobErr error) error
	// Release hands a job running for owner back to the queue (graceful
	// shutdown). It keeps its id, so it is claimed again before younger
	// jobs, and a full queue does not refuse it. Errors as for Complete.
	Release(ctx context.Context, id, owner string) error
	// Retry hands a job running for owner back to be claimed again once
	// notBefore has passed (a transient failure, backed off), recording the
	// error. It keeps its id, so once due it is claimed before younger jobs.
	// Errors as for Complete.
	Retry(ctx context.Context, id, owner string, jobErr error, notBefore time.Time) error
	// Postpone hands a job running for owner back until notBefore without
	// counting its claim as an attempt: the job met a wait it did not cause
	// (GitHub's rate limit until its reset), not a failure. reason is kept
	// as the job's last error. Errors as for Complete.
	Postpone(ctx context.Context, id, owner string, reason error, notBefore time.Time) error
	// RecoverRunning requeues the running jobs no live process holds, and
	// says how many; every process calls it at start. On a single-process
	// store (Bolt) that is every running job, since any job still running
	// then was cut short by a crash; on a shared store (Postgres) it is the
	// jobs whose lease expired, as other replicas' jobs are still live.
	RecoverRunning(ctx context.Context) (int, error)
	// Heartbeat renews the lease of a job running for owner. ErrLeaseLost
	// when it is not running for owner any more, ErrNotFound for an unknown
	// id. A worker calls it well within the lease (a third of it) while it
	// works, and stops without completing the job on ErrLeaseLost.
	Heartbeat(ctx context.Context, id, owner string) error
	// ReclaimExpired requeues the running jobs whose lease expired (their
	// owner died or stalled), keeping their place, and says how many; every
	// replica calls it periodically. A single-process store has nothing to
	// reclaim while it runs: it returns 0, and RecoverRunning at the next
	// start is its takeover.
	ReclaimExpired(ctx context.Context) (int, error)
	// PruneDone deletes the jobs that finished (done or failed) before
	// olderThan, with their delivery ids, and says how many. Queued and
	// running jobs are never touched. Pass a time at least DeliveryRetention
	// in the past, or a late redelivery of a pruned job would run again.
	PruneDone(ctx context.Context, olderThan time.Time) (int, error)
	// CountQueued is the number of queued jobs, those waiting for a retry
	// included: the queue depth, and what maxQueued bounds.
	CountQueued(ctx context.Context) (int, error)
	// GetJob returns one job by id.
	GetJob(ctx context.Context, id string) (*Job, error)
	// FailingJobs returns, with their payloads, the jobs that failed and
	// will run again (queued for a retry, or running again after a failed
	// attempt: LastError set) and those that failed for good since since,
	// newest change first, at most n. The status page shows them.
	FailingJobs(ctx context.Context, since time.Time, n int) ([]*Job, error)

	// Put, Get, Delete and List work on keyed records in named buckets. A
	// bucket exists once something is put in it; Get of an absent record is
	// ErrNotFound, Delete of one is not an error. Values are the caller's
	// copies: changing them later changes nothing stored.
	Put(ctx context.Context, bucket, key string, value []byte) error
	Get(ctx context.Context, bucket, key string) ([]byte, error)
	Delete(ctx context.Context, bucket, key string) error
	// List returns the records of bucket whose key starts with prefix, by key.
	List(ctx context.Context, bucket, prefix string) ([]KV, error)
	// Update replaces a record with fn(old) atomically; old is nil when absent,
	// and a nil result deletes the record. fn may be called more than once (a
	// store may retry it in a new transaction), so it must be a pure function
	// of old.
	Update(ctx context.Context, bucket, key string, fn func(old []byte) ([]byte, error)) error

	// Tx runs fn in one transaction over the records: all its writes
	// commit together or not at all, and each record it reads stays locked
	// against other writers until the end (see RecordTx). An error from fn
	// rolls everything back and is returned (wrapped). fn may be called more
	// than once (a store may retry it after a conflict), so it must do
	// nothing but read and write through tx.
	Tx(ctx context.Context, fn func(tx RecordTx) error) error

	// Ping checks that the store can be read (for /readyz).
	Ping(ctx context.Context) error
	Close() error
}
