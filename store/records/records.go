// Package records keeps what shardgate remembers of pull requests between
// events, typed, over the store: the pull request's state and the heads seen,
// each project's plan record with its judgement, who added an exception label
// and when, producer attestations, the comment versions and label events
// already handled, the audit record of every finished apply, and the highest
// metadata version seen per coordinator group.
package records

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/policy/report"
)

// Store buckets of the records.
const (
	// BucketAudit holds the audit records (Audit), one per apply attempt
	// (AuditKey); the apply writes them fenced, through the apply queue.
	BucketAudit        = "audit"
	bucketPRs          = "prs"
	bucketPlans        = "plans"
	bucketLabels       = "labels"
	bucketAttestations = "attestations"
	bucketVersions     = "metadata_versions"
	bucketCommands     = "commands"
)

// PRState is what shardgate remembers of a pull request between events.
type PRState struct {
	Ref     pullreq.Ref `json:"ref"`
	Author  string      `json:"author"`
	HeadSHA string      `json:"head_sha"`
	// HeadSeenAt is GitHub's time (whole seconds) when shardgate first saw
	// HeadSHA; Heads are the heads seen so far, oldest first (see HeadAt).
	HeadSeenAt time.Time      `json:"head_seen_at"`
	Heads      []HeadSighting `json:"heads,omitempty"`
	BaseRef    string         `json:"base_ref"`
	Draft      bool           `json:"draft"`
	CommentID  int64          `json:"comment_id,omitempty"`
	// Status is the line at the top of the comment (queued, planning, done…).
	Status string `json:"status"`
	// LimitNotice is the last "waiting for GitHub's rate limit" line a job of
	// the pull request tried to show in place of Status, and LimitShown
	// whether GitHub took the edit; the next edit showing Status clears both.
	LimitNotice string `json:"limit_notice,omitempty"`
	LimitShown  bool   `json:"limit_shown,omitempty"`
	// Notes are shown under the status until the head changes (labels removed…).
	Notes []string `json:"notes,omitempty"`
	// Projects are the project names planned for HeadSHA, in order.
	Projects []string `json:"projects,omitempty"`
	// ConfigError is a bad .shardgate.yaml on the base branch, shown instead of plans.
	ConfigError string `json:"config_error,omitempty"`
	// Waiting are the merged projects with changes that the merge did not
	// apply, and why (apply: manual): they wait for an approver's
	// `/shardgate apply <project>`. One that has an apply job since is no
	// longer waiting, whatever this list says.
	Waiting []WaitingApply `json:"waiting_applies,omitempty"`
}

// WaitingApply is a merged project left for `/shardgate apply <project>`.
type WaitingApply struct {
	Project string `json:"project"`
	// Why it was not applied on merge, as markdown the comment shows.
	Why string `json:"why"`
}

// Plan is one project's plan of one head commit, with its last judgement.
type Plan struct {
	Project   string   `json:"project"`
	Dir       string   `json:"dir"`
	Workspace string   `json:"workspace"`
	VarFiles  []string `json:"var_files,omitempty"`
	// Keys are the project's settings it was planned with (init and plan
	// arguments, environment, ...): the merge's re-plan and apply use them.
	Keys repoconfig.ProjectKeys `json:"project_keys"`
	// TerraformPath is the binary the plan ran (its apply runs the same);
	// Terraform names it ("terraform 1.11.4") when the server has several.
	TerraformPath string               `json:"terraform_path,omitempty"`
	Terraform     string               `json:"terraform,omitempty"`
	HeadSHA       string               `json:"head_sha"`
	ChangeSet     *planparse.ChangeSet `json:"change_set,omitempty"`
	Fingerprint   string               `json:"fingerprint,omitempty"`
	Error         string               `json:"error,omitempty"`
	// Diagnostics are terraform's errors and warnings when Error is a failed
	// terraform command: summary, detail, file and line, redacted.
	Diagnostics []report.Diagnostic          `json:"diagnostics,omitempty"`
	Coordinator policy.Coordinator           `json:"coordinator"`
	Live        map[string]policy.LiveStream `json:"live,omitempty"`
	LockWaits   []report.LockWait            `json:"lock_waits"`
	Decision    policy.Decision              `json:"decision"`
	PlannedAt   time.Time                    `json:"planned_at"`
	CheckRunID  int64                        `json:"check_run_id,omitempty"`
	// SkippedLinks are the checkout's symlinks that were not made (they lead
	// out of it or loop), as ghapp.SkippedLink writes them; the report warns.
	SkippedLinks []string `json:"skipped_links,omitempty"`
	// Peers are the shard counts the commit's other projects ask of the
	// streams this plan changes (policy.Request.Peers), kept so that a
	// judgement again (labels, attestations) sees them too.
	Peers []planparse.Desired `json:"peers,omitempty"`
}

// Label is who added an exception label, and on which head commit, as
// the issue event EventID says (never a webhook's sender).
type Label struct {
	Label   string    `json:"label"`
	Actor   string    `json:"actor"`
	HeadSHA string    `json:"head_sha"`
	AddedAt time.Time `json:"added_at"`
	EventID int64     `json:"event_id,omitempty"`
}

// HeadSighting is a head commit and GitHub's time when shardgate first saw it.
// The push happened at or before Since, never after.
type HeadSighting struct {
	SHA   string    `json:"sha"`
	Since time.Time `json:"since"`
}

// maxHeadSightings bounds PRState.Heads: an approval older than the oldest
// kept head binds to no head, which only ever withholds it.
const maxHeadSightings = 50

// SawHead records that sha is the head, as GitHub said at time at.
func (st *PRState) SawHead(sha string, at time.Time) {
	at = at.UTC().Truncate(time.Second)
	if len(st.Heads) == 0 && st.HeadSHA != "" {
		// A record from before head sightings were kept.
		st.Heads = []HeadSighting{{SHA: st.HeadSHA, Since: st.HeadSeenAt.UTC().Truncate(time.Second)}}
	}
	st.HeadSHA, st.HeadSeenAt = sha, at
	st.Heads = append(st.Heads, HeadSighting{SHA: sha, Since: at})
	if n := len(st.Heads); n > maxHeadSightings {
		st.Heads = append([]HeadSighting(nil), st.Heads[n-maxHeadSightings:]...)
	}
}

// HeadAt is the head an approval made at GitHub time t counts for: the newest
// head shardgate saw strictly before t (whole seconds). Sightings follow
// pushes, so that head had been pushed when the approval was made; in the
// second of a sighting the order cannot be told, and the older head is taken.
// "" when t precedes every head shardgate knows.
func (st *PRState) HeadAt(t time.Time) string {
	t = t.UTC().Truncate(time.Second)
	heads := st.Heads
	if len(heads) == 0 && st.HeadSHA != "" {
		heads = []HeadSighting{{SHA: st.HeadSHA, Since: st.HeadSeenAt.UTC().Truncate(time.Second)}}
	}
	for i := len(heads) - 1; i >= 0; i-- {
		if t.After(heads[i].Since) {
			return heads[i].SHA
		}
	}
	return ""
}

// OrderPlans puts plan records in the order of a pull request's project
// list (PRState.Projects).
func OrderPlans(plans []*Plan, order []string) []*Plan {
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	out := append([]*Plan(nil), plans...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && pos[out[j].Project] < pos[out[j-1].Project]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Audit is kept for every finished apply job (BucketAudit).
type Audit struct {
	Seq      string      `json:"seq"`
	Ref      pullreq.Ref `json:"ref"`
	Project  string      `json:"project"`
	MergedBy string      `json:"merged_by"`
	// AppliedBy is the approver whose `/shardgate apply <project>` queued the
	// apply; "" when the merge did.
	AppliedBy           string               `json:"applied_by,omitempty"`
	MergeSHA            string               `json:"merge_sha"`
	ReviewedSHA         string               `json:"reviewed_sha"`
	ReviewedFingerprint string               `json:"reviewed_fingerprint"`
	AppliedFingerprint  string               `json:"applied_fingerprint,omitempty"`
	Exceptions          []string             `json:"exceptions"`
	Attestations        []policy.Attestation `json:"attestations"`
	// Outcome is the apply job's final state (applyqueue.State: "applied" or
	// "failed"); a string here, so the records need not know the queue.
	Outcome            string  `json:"outcome"`
	Reason             string  `json:"reason,omitempty"`
	TerraformOutcome   string  `json:"terraform_outcome"`
	ConvergenceSeconds float64 `json:"convergence_seconds"`
	Attempt            int     `json:"attempt"`
	// RequestIDPrefix starts the X-Request-Id of every coordinator call the
	// apply made (when the root module passes shardgate_request_id_prefix on):
	// search the coordinator's audit log for it.
	RequestIDPrefix string `json:"request_id_prefix,omitempty"`
	// RequestIDs are the X-Request-Id of every coordinator mutation the apply
	// made: the broker's, which it sets whatever the module sends.
	RequestIDs []string `json:"request_ids,omitempty"`
	// CoordinatorCalls are the calls terraform's processes made to a
	// configured coordinator through the job's broker, allowed or refused:
	// every mutation and the first coordbroker.MaxReads reads.
	CoordinatorCalls []CoordinatorCall `json:"coordinator_calls,omitempty"`
	// OmittedCoordinatorReads counts the reads beyond those listed, and
	// OmittedRefusedCalls the refused calls beyond them (the job stops at
	// the first refusal; calls already in flight may follow).
	OmittedCoordinatorReads int       `json:"omitted_coordinator_reads,omitempty"`
	OmittedRefusedCalls     int       `json:"omitted_refused_calls,omitempty"`
	FinishedAt              time.Time `json:"finished_at"`
}

// CoordinatorCall is one coordinator call of an apply (coordbroker.Call).
type CoordinatorCall struct {
	Method    string `json:"method"`
	Path      string `json:"path"`
	Status    int    `json:"status"`
	RequestID string `json:"request_id,omitempty"`
	Allowed   bool   `json:"allowed"`
	// Summary names the call with its count ("POST …/scale (targetShardCount 5)").
	Summary string `json:"summary"`
	// Reason says why the broker refused it.
	Reason string `json:"reason,omitempty"`
}

// AuditKey names the audit record of one attempt of the apply job seq.
func AuditKey(seq string, attempt int) string { return seq + "#" + fmt.Sprint(attempt) }

// Fingerprint identifies a change set by what it would do to the coordinator:
// every non-noop change and every desired shard count, in a canonical order.
func Fingerprint(cs *planparse.ChangeSet) string {
	if cs == nil {
		return ""
	}
	var lines []string
	for _, c := range cs.Changes {
		if c.Action == planparse.ActionNoop {
			continue
		}
		lines = append(lines, fmt.Sprintf("change %s %s/%s %s %s %s %s %s", c.Address, c.StreamPrefix, c.ConsumerGroup,
			c.CoordinatorURL, c.Action, intText(c.ShardsBefore), intText(c.ShardsAfter), strings.Join(c.Unknown, ",")))
	}
	for _, d := range cs.Desired {
		lines = append(lines, fmt.Sprintf("desired %s %s/%s %d", d.Address, d.StreamPrefix, d.ConsumerGroup, d.ShardCount))
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

func intText(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
