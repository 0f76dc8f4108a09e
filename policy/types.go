// Package policy evaluates shardgate's Rego policies over a coordinator change set.
//
// It is pure: it compiles the policies once, prepares one query per rule package,
// and evaluates them per plan, side by side, returning plain Go values. It never
// posts, never reads the environment, and is safe for concurrent use. Evaluation fails closed: an error is a denial.
package policy

import (
	"time"

	"github.com/shardgate/shardgate/planparse"
)

// Defaults for the thresholds of the shard_delta rule.
const (
	DefaultMaxShardDelta  = 4
	DefaultMaxScaleFactor = 2.0
	// ExceptionLabelPrefix starts every exception label: policy-exception/<rule id>.
	ExceptionLabelPrefix = "policy-exception/"
)

// Rule ids that are part of shardgate's interface.
const (
	RuleNoDestroy              = "no_destroy"
	RuleShardDelta             = "shard_delta"
	RuleQuiesceAttestation     = "quiesce_attestation"
	RuleConflictingShardCount  = "conflicting_shard_count"
	RuleUnknownValue           = "unknown_value"
	RuleCoordinatorUnreachable = "coordinator_unreachable"
	// RuleInvalidShardCount denies a shard count that is not a whole number >= 1.
	RuleInvalidShardCount = "invalid_shard_count"
	// RuleTaintedReplace warns about a retry of a failed apply.
	RuleTaintedReplace = "tainted_replace"
	// RuleDrift warns about an instance the plan leaves alone while the live
	// count differs from the code's.
	RuleDrift = "drift"
	// RuleOtherResourceDestroyed warns about a non-coordinator resource the plan
	// destroys or replaces.
	RuleOtherResourceDestroyed = "other_resource_destroyed"
	// RuleIncompletePlan warns that Terraform deferred changes to a later plan.
	RuleIncompletePlan = "incomplete_plan"
	// RulePolicyError is reported when the policies themselves could not be evaluated.
	RulePolicyError = "policy_error"
)

// Config holds the policy settings (from the base branch's .shardgate.yaml, else
// server defaults).
type Config struct {
	MaxShardDelta  int     `json:"max_shard_delta"`
	MaxScaleFactor float64 `json:"max_scale_factor"`
	// DuplicateTolerantStreams are stream prefixes that may be scaled without a
	// producer-quiesce attestation.
	DuplicateTolerantStreams []string `json:"duplicate_tolerant_streams"`
}

// DefaultConfig returns the policy settings used when none are configured.
func DefaultConfig() Config {
	return Config{MaxShardDelta: DefaultMaxShardDelta, MaxScaleFactor: DefaultMaxScaleFactor}
}

// Coordinator says whether live coordinator state was consulted and could be read.
type Coordinator struct {
	// Consulted is false when no coordinator was asked (e.g. `shardgate check`).
	Consulted bool `json:"consulted"`
	Reachable bool `json:"reachable"`
	// Error is a redacted, one-line reason when Consulted && !Reachable.
	Error string `json:"error,omitempty"`
}

// LiveGroup is one coordinator group as the coordinator reports it.
type LiveGroup struct {
	ConsumerGroup     string `json:"consumer_group"`
	ShardCount        int    `json:"shard_count"`
	State             string `json:"state"`
	ActiveMigrationID string `json:"active_migration_id,omitempty"`
	MigrationState    string `json:"migration_state,omitempty"`
	LiveMembers       int    `json:"live_members"`
	MetadataVersion   int64  `json:"metadata_version"`
}

// LiveStream is every coordinator group of one stream prefix.
type LiveStream struct {
	// Coordinator is the normalized coordinator URL the stream was read from.
	Coordinator  string      `json:"coordinator,omitempty"`
	StreamPrefix string      `json:"stream_prefix"`
	Groups       []LiveGroup `json:"groups"`
	// MetadataVersionRegressed is set when metadataVersion went backwards since last
	// seen (a restored Redis).
	MetadataVersionRegressed bool `json:"metadata_version_regressed,omitempty"`
}

// Label is a pull-request label as shardgate judged it.
type Label struct {
	Name string `json:"name"`
	// Actor is who added the label, when known.
	Actor string `json:"actor,omitempty"`
	// Counted is false for an exception label that does not count (added by the PR
	// author, by a non-approver, or for an older head); Reason says why.
	Counted bool   `json:"counted"`
	Reason  string `json:"reason,omitempty"`
}

// Attestation records that producers of a stream were quiesced.
type Attestation struct {
	StreamPrefix string    `json:"stream_prefix"`
	Actor        string    `json:"actor"`
	HeadSHA      string    `json:"head_sha,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at"`
	// CommentID is the pull-request comment that gave it (0: none), so that
	// an edit of that comment by anyone but its author revokes it.
	CommentID int64 `json:"comment_id,omitempty"`
}

// Request is everything one evaluation looks at.
type Request struct {
	ChangeSet   *planparse.ChangeSet
	Coordinator Coordinator
	// Live is keyed by stream (planparse.StreamKey of the normalized coordinator
	// URL and the prefix): two coordinators with one prefix are two streams.
	Live         map[string]LiveStream
	Labels       []Label
	Attestations []Attestation
	Config       Config
	// Now decides which attestations are still fresh; policy never reads the clock.
	Now time.Time
	// Peers are the shard counts other places ask of the plan's streams:
	// another project of the repository at the same commit, another
	// repository's last apply or drift check. Each Address says where (it
	// is what a finding names). They join the plan's own in input.desired,
	// so conflicting_shard_count sees one stream's counts across them.
	Peers []planparse.Desired
}

// Violation is one denied finding.
type Violation struct {
	Rule  string `json:"rule"`
	Title string `json:"title,omitempty"`
	// Stream is the finding's stream key (planparse.StreamKey) when a rule gave
	// one: two coordinators may have a stream of the same prefix.
	Stream         string `json:"stream,omitempty"`
	StreamPrefix   string `json:"stream_prefix"`
	ConsumerGroup  string `json:"consumer_group"`
	Address        string `json:"address,omitempty"`
	Message        string `json:"message"`
	Waivable       bool   `json:"waivable"`
	ExceptionLabel string `json:"exception_label"`
}

// Warning is an advisory finding; it never denies.
type Warning struct {
	Rule          string `json:"rule"`
	Title         string `json:"title,omitempty"`
	Stream        string `json:"stream,omitempty"` // as in Violation
	StreamPrefix  string `json:"stream_prefix"`
	ConsumerGroup string `json:"consumer_group"`
	Address       string `json:"address,omitempty"`
	Message       string `json:"message"`
}

// ExceptionApplied is a violation waived by a counted exception label.
type ExceptionApplied struct {
	Rule          string `json:"rule"`
	Label         string `json:"label"`
	Actor         string `json:"actor,omitempty"`
	Stream        string `json:"stream,omitempty"` // as in Violation
	StreamPrefix  string `json:"stream_prefix"`
	ConsumerGroup string `json:"consumer_group"`
	Message       string `json:"message"`
}

// Decision is the outcome of one evaluation.
type Decision struct {
	Allowed bool `json:"allowed"`
	// Changes are the change set's changes as judged: the effect on the
	// coordinator, with shards_before the live count where it was read and an
	// instance whose apply calls the coordinator at another count than the live
	// one turned into a scale (docs/policy-input.md, "Effect"). Reports and the
	// apply path use these, never the plan's raw before/after. When judging
	// changed none of them (no live state read, no other action), this is the
	// request's ChangeSet.Changes itself, not a copy: write neither.
	Changes           []planparse.Change `json:"changes"`
	Violations        []Violation        `json:"violations"`
	Warnings          []Warning          `json:"warnings"`
	ExceptionsApplied []ExceptionApplied `json:"exceptions_applied"`
	AttestationsUsed  []Attestation      `json:"attestations_used"`
	// LabelsNotCounted are exception labels present on the PR that did not count.
	LabelsNotCounted []Label `json:"labels_not_counted"`
}

// RuleInfo is what a rule's `# METADATA` annotations say about it.
type RuleInfo struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	Description    string `json:"description"`
	Waivable       bool   `json:"waivable"`
	ExceptionLabel string `json:"exception_label,omitempty"`
}
