// Package report renders a policy decision over a coordinator change set as text,
// JSON or the markdown body of shardgate's pull-request comment.
//
// The markdown is what a reviewer reads: a summary line, the coordinator changes,
// every violation with how to resolve it, warnings, exceptions and attestations
// used, then the raw resource changes folded away. It always fits under GitHub's
// comment limit, saying so when it had to leave something out.
package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

// MaxCommentChars is GitHub's limit on the body of an issue comment.
const MaxCommentChars = 65536

// DefaultApprovers describes who may add exception labels when the caller does not say.
const DefaultApprovers = "an approver who is not the PR author"

// LockWait is one Terraform state lock that shardgate waited on.
type LockWait struct {
	ID            string    `json:"id"`
	Who           string    `json:"who"`
	Operation     string    `json:"operation"`
	Created       time.Time `json:"created"`
	WaitedSeconds float64   `json:"waited_seconds"`
}

// Report is one project's plan judged by the policy.
type Report struct {
	// Project names the Terraform project; empty for a single plan file.
	Project   string
	ChangeSet *planparse.ChangeSet
	Decision  policy.Decision
	// Rules are the policy's rule metadata, used for titles and resolutions.
	Rules       []policy.RuleInfo
	Coordinator policy.Coordinator
	// Approvers says who may add exception labels, e.g. "@alice, @org/sre".
	Approvers string
	// LockWaits is nil where state locks do not apply (`shardgate check`) and
	// non-nil (possibly empty) after running Terraform.
	LockWaits []LockWait
}

// Changes returns the coordinator changes worth reporting: every change but noops.
func (r *Report) Changes() []planparse.Change {
	out := []planparse.Change{}
	if r.ChangeSet == nil {
		return out
	}
	for _, c := range r.ChangeSet.Changes {
		if c.Action != planparse.ActionNoop {
			out = append(out, c)
		}
	}
	return out
}

type jsonReport struct {
	Allowed           bool                      `json:"allowed"`
	Project           string                    `json:"project,omitempty"`
	Changes           []planparse.Change        `json:"changes"`
	Violations        []policy.Violation        `json:"violations"`
	Warnings          []policy.Warning          `json:"warnings"`
	ExceptionsApplied []policy.ExceptionApplied `json:"exceptions_applied"`
	AttestationsUsed  []policy.Attestation      `json:"attestations_used"`
	LabelsNotCounted  []policy.Label            `json:"labels_not_counted"`
	Coordinator       *policy.Coordinator       `json:"coordinator,omitempty"`
	StateLockWaits    *[]LockWait               `json:"state_lock_waits,omitempty"`
}

// JSON renders the report as one JSON object; lists are never null.
func (r *Report) JSON() ([]byte, error) {
	d := r.Decision
	out := jsonReport{
		Allowed:           d.Allowed,
		Project:           r.Project,
		Changes:           r.Changes(),
		Violations:        nonNil(d.Violations),
		Warnings:          nonNil(d.Warnings),
		ExceptionsApplied: nonNil(d.ExceptionsApplied),
		AttestationsUsed:  nonNil(d.AttestationsUsed),
		LabelsNotCounted:  nonNil(d.LabelsNotCounted),
	}
	if r.Coordinator.Consulted {
		c := r.Coordinator
		out.Coordinator = &c
	}
	if r.LockWaits != nil {
		w := nonNil(r.LockWaits)
		out.StateLockWaits = &w
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render json: %w", err)
	}
	return append(b, '\n'), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Summary is the one-line verdict shared by every format and by check runs.
func (r *Report) Summary() string {
	d := r.Decision
	changes := r.Changes()
	var b strings.Builder
	if d.Allowed {
		b.WriteString("Allowed")
	} else {
		b.WriteString("Denied")
	}
	if len(changes) == 0 {
		b.WriteString(": no coordinator changes")
	} else {
		fmt.Fprintf(&b, ": %s (%s)", plural(len(changes), "coordinator change"), actionCounts(changes))
	}
	if n := len(d.Violations); n > 0 {
		fmt.Fprintf(&b, "; %s", plural(n, "violation"))
	}
	if n := len(d.ExceptionsApplied); n > 0 {
		fmt.Fprintf(&b, "; %s applied", plural(n, "exception"))
	}
	if n := len(d.Warnings); n > 0 {
		fmt.Fprintf(&b, "; %s", plural(n, "warning"))
	}
	return b.String()
}

func actionCounts(changes []planparse.Change) string {
	counts := map[planparse.Action]int{}
	for _, c := range changes {
		counts[c.Action]++
	}
	actions := make([]string, 0, len(counts))
	for a := range counts {
		actions = append(actions, string(a))
	}
	sort.Strings(actions)
	parts := make([]string, 0, len(actions))
	for _, a := range actions {
		parts = append(parts, fmt.Sprintf("%d %s", counts[planparse.Action(a)], a))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func (r *Report) rule(id string) policy.RuleInfo {
	for _, ri := range r.Rules {
		if ri.ID == id {
			return ri
		}
	}
	return policy.RuleInfo{ID: id}
}

func (r *Report) approvers() string {
	if r.Approvers == "" {
		return DefaultApprovers
	}
	return r.Approvers
}

// Resolution says, in plain text, how a reviewer can clear a violation.
func (r *Report) Resolution(v policy.Violation) string {
	return r.resolution(v, func(s string) string { return "'" + s + "'" }, func(s string) string { return s })
}

// resolution builds the resolution with quote for names and commands and text for
// plain words, so the markdown and text renderings share one wording.
func (r *Report) resolution(v policy.Violation, quote, text func(string) string) string {
	var fix string
	switch v.Rule {
	case policy.RuleConflictingShardCount:
		fix = text("Make every instance of the stream ask for the same shard_count (scale is stream-wide).")
	case policy.RuleUnknownValue:
		fix = text("Make the stream prefix, consumer group and shard count known at plan time (no values computed during apply).")
	case policy.RuleCoordinatorUnreachable:
		fix = text("shardgate could not read the live coordinator state, so it cannot judge the change; re-plan once the coordinator is reachable.")
	case policy.RulePolicyError:
		fix = text("The policies could not be evaluated; this is a shardgate or policy problem, not one of the pull request.")
	case policy.RuleQuiesceAttestation:
		fix = text("Pause the producers of ") + quote(v.StreamPrefix) + text(" and drain their retries, then "+r.approvers()+" comments ") +
			quote("/shardgate attest quiesce "+v.StreamPrefix) + text(".")
	case policy.RuleNoDestroy:
		fix = text("Keep the group in the configuration.")
	case policy.RuleShardDelta:
		fix = text("Scale in smaller steps.")
	default:
		fix = text("Change the plan so the rule holds.")
	}
	if v.Waivable && v.ExceptionLabel != "" {
		return fix + text(" Or "+r.approvers()+" adds the label ") + quote(v.ExceptionLabel) + text(" (it counts for the current head commit only).")
	}
	if !v.Waivable {
		return fix + text(" Not waivable.")
	}
	return fix
}

func shards(p *int, unknown bool) string {
	switch {
	case p != nil:
		return fmt.Sprint(*p)
	case unknown:
		return "(known after apply)"
	default:
		return "–"
	}
}

func isUnknown(c planparse.Change, field string) bool {
	for _, u := range c.Unknown {
		if u == field {
			return true
		}
	}
	return false
}

// shardsCell renders "before → after" for one change.
func shardsCell(c planparse.Change) string {
	before := shards(c.ShardsBefore, false)
	after := shards(c.ShardsAfter, isUnknown(c, planparse.FieldShardCount))
	switch c.Action {
	case planparse.ActionCreate:
		return after
	case planparse.ActionDelete, planparse.ActionUnmanage:
		return before + " → (kept by the coordinator)"
	}
	return before + " → " + after
}

// note explains what is special about a change.
func note(c planparse.Change) string {
	var parts []string
	switch c.ActionReason {
	case "replace_because_tainted":
		parts = append(parts, "replaced because the last apply failed (tainted)")
	case "replace_by_request":
		parts = append(parts, "replace requested (-replace)")
	}
	switch c.Action {
	case planparse.ActionUnmanage:
		parts = append(parts, "Terraform stops managing it; the coordinator keeps the group")
	case planparse.ActionDelete:
		parts = append(parts, "deletes the group's coordinator metadata")
	}
	if len(c.Unknown) > 0 {
		parts = append(parts, "unknown at plan time: "+strings.Join(c.Unknown, ", "))
	}
	return strings.Join(parts, "; ")
}
