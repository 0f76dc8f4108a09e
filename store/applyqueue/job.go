// Package applyqueue keeps the applies that merges start, in merge order, in
// the store: the job, its states, the stream locks its order implies, the
// leases and fencing tokens that keep two processes from running one job,
// requeue after a failure, pruning of finished jobs, and the scheduler that
// starts every job whose streams are free. What an apply does is the
// caller's: the scheduler runs a RunFunc (bot's apply execution).
package applyqueue

import (
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
)

// State is where an apply job is.
type State string

const (
	Queued     State = "queued"     // waiting for its turn on its streams
	Preflight  State = "preflight"  // checking the coordinator (active migrations, members, attestation)
	Planning   State = "planning"   // re-planning the merge commit and comparing with the review
	Applying   State = "applying"   // terraform apply of the saved plan
	Converging State = "converging" // waiting until the coordinator is complete and safe
	Applied    State = "applied"    // done
	Failed     State = "failed"     // not applied (or not converged); Reason says why; /shardgate apply retries
)

// Finished says whether a job no longer holds or waits for stream locks.
func (s State) Finished() bool { return s == Applied || s == Failed }

// Job is one project's apply after a merge. Jobs are ordered by Seq
// (merge order) and hold a lock on every stream prefix in Streams, and on
// their Terraform state (StateKey), from the moment they start until they
// finish: a job runs only when no earlier unfinished job shares one of its
// streams or its state.
type Job struct {
	// Seq is assigned at enqueue, increasing in merge order (zero-padded, so
	// key order is merge order).
	Seq     string      `json:"seq"`
	Ref     pullreq.Ref `json:"ref"`
	Project string      `json:"project"`
	// Streams are the streams (planparse.StreamKey: coordinator and prefix) the
	// reviewed plan touches, sorted.
	Streams []string `json:"streams"`
	// StateKey names the project's Terraform state (repository, directory,
	// workspace): jobs of one state run one at a time, in merge order, as
	// jobs of one stream do. A project without coordinator changes (an
	// alarm, a bucket) has no streams and is held by this lock alone. ""
	// takes no state lock (jobs enqueued before there was one).
	StateKey string `json:"state_key,omitempty"`
	// After are the projects of the same merge (depends_on in
	// .shardgate.yaml) whose applies must succeed before this one starts:
	// while one of them is not applied (queued, running, or failed), this
	// job waits. A project the merge does not apply does not hold it.
	After       []string `json:"after,omitempty"`
	ReviewedSHA string   `json:"reviewed_sha"`
	MergeSHA    string   `json:"merge_sha"`
	MergedBy    string   `json:"merged_by"`
	// RequestedBy is the approver whose `/shardgate apply <project>` queued
	// the job (a project applied by hand); "" for an apply on merge.
	RequestedBy string `json:"requested_by,omitempty"`
	// Sensitive are the values the reviewed plan marks sensitive
	// (planparse.ChangeSet.SensitiveValues): what the job's lines on the PR
	// and its check run show as "(sensitive)".
	Sensitive []string `json:"sensitive,omitempty"`

	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Progress is the latest human-readable step detail (lock holder, migration states).
	Progress string `json:"progress,omitempty"`
	Attempt  int    `json:"attempt"`

	// LeaseOwner holds the job while it runs, until LeaseUntil; a job whose
	// lease expired (its process is gone) is taken over, never unlocked by hand.
	LeaseOwner string    `json:"lease_owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitempty"`
	// Fence is the fencing token of the current (or last) acquisition: it
	// increases with every acquisition of any job, and only the holder of
	// the token stored here may write to the job.
	Fence uint64 `json:"fence,omitempty"`

	// RetryOf is the Seq of the failed job that Requeue replaced with this
	// one; the replaced record is deleted, and hidden until it is.
	RetryOf string `json:"retry_of,omitempty"`

	CheckRunID int64     `json:"check_run_id,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}
