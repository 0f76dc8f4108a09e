// Package report renders a policy decision over a coordinator change set as text,
// JSON, the markdown body of shardgate's pull-request comment and the output of
// its check runs.
//
// The markdown is what a reviewer reads: a summary line, the coordinator changes
// as judged, the other resources the plan changes, every violation with how to
// resolve it, warnings, exceptions and attestations used, then the raw resource
// changes folded away. It always fits the budget it is given, saying so when it
// had to leave something out, and no plan-derived text in it can mention, link,
// embed, open HTML or make structure (escape.go).
package report

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

// MaxCommentChars is GitHub's limit on the body of an issue comment.
const MaxCommentChars = 65536

// MaxCheckChars is GitHub's limit on a check run's output summary and text.
const MaxCheckChars = 65535

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
	// Decision.Changes, when set, are the changes shown (as judged: live counts,
	// tainted retries turned into scales); else ChangeSet.Changes.
	Decision policy.Decision
	// Rules are the policy's rule metadata, used for titles and resolutions.
	Rules       []policy.RuleInfo
	Coordinator policy.Coordinator
	// Approvers says who may add exception labels, e.g. "alice or a member of
	// org/sre". An '@' that would mention someone is dropped when rendered.
	Approvers string
	// Local is set for the command line (`shardgate check` / `plan`): how to
	// clear a violation is then said with its flags (--attest, --label), not
	// with pull-request comments and labels.
	Local bool
	// LockWaits is nil where state locks do not apply (`shardgate check`) and
	// non-nil (possibly empty) after running Terraform.
	LockWaits []LockWait

	// hide is set on the copy shown() renders from.
	hide *hider
}

// judged is every coordinator change, noops included, as the policy judged it
// when it did, else as the plan has it.
func (r *Report) judged() []planparse.Change {
	if r.Decision.Changes != nil {
		return r.Decision.Changes
	}
	if r.ChangeSet == nil {
		return nil
	}
	return r.ChangeSet.Changes
}

// Changes returns the coordinator changes worth reporting, as judged: every
// change but noops.
func (r *Report) Changes() []planparse.Change {
	n := 0
	for _, c := range r.judged() {
		if c.Action != planparse.ActionNoop {
			n++
		}
	}
	out := make([]planparse.Change, 0, n) // in one array: thousands of changes on a large plan
	for _, c := range r.judged() {
		if c.Action != planparse.ActionNoop {
			out = append(out, c)
		}
	}
	return out
}

// rows are the changes shown in the changes table: Changes and the noops whose
// live count differs from the desired one (drift), in plan order.
func (r *Report) rows() []planparse.Change {
	out := []planparse.Change{}
	for _, c := range r.judged() {
		if c.Action != planparse.ActionNoop || drifted(c) {
			out = append(out, c)
		}
	}
	return out
}

// drifted reports a noop whose live count (ShardsBefore, once the coordinator was
// read) is not what the configuration asks for.
func drifted(c planparse.Change) bool {
	return c.Action == planparse.ActionNoop && c.ShardsBefore != nil && c.ShardsAfter != nil && *c.ShardsBefore != *c.ShardsAfter
}

// OtherChanges returns the plan's changes to resources that are not coordinator
// groups, never nil.
func (r *Report) OtherChanges() []planparse.OtherChange {
	if r.ChangeSet == nil {
		return []planparse.OtherChange{}
	}
	return nonNil(r.ChangeSet.OtherChanges)
}

func (r *Report) incomplete() bool { return r.ChangeSet != nil && r.ChangeSet.Incomplete }

// jsonOther is one entry of "other_changes".
type jsonOther struct {
	Address      string   `json:"address"`
	Type         string   `json:"type"`
	Actions      []string `json:"actions"`
	ActionReason string   `json:"action_reason,omitempty"`
}

type jsonReport struct {
	Allowed           bool                      `json:"allowed"`
	Project           string                    `json:"project,omitempty"`
	Incomplete        bool                      `json:"incomplete,omitempty"`
	Changes           []planparse.Change        `json:"changes"`
	OtherChanges      []jsonOther               `json:"other_changes"`
	Violations        []policy.Violation        `json:"violations"`
	Warnings          []policy.Warning          `json:"warnings"`
	ExceptionsApplied []policy.ExceptionApplied `json:"exceptions_applied"`
	AttestationsUsed  []policy.Attestation      `json:"attestations_used"`
	LabelsNotCounted  []policy.Label            `json:"labels_not_counted"`
	Coordinator       *policy.Coordinator       `json:"coordinator,omitempty"`
	StateLockWaits    *[]LockWait               `json:"state_lock_waits,omitempty"`
}

// JSON renders the report as one JSON object, indented by two spaces, as
// WriteJSON writes it; lists are never null.
func (r *Report) JSON() ([]byte, error) {
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// jsonValue is the report as JSON renders it.
func (r *Report) jsonValue() jsonReport {
	r = r.shown()
	d := r.Decision
	out := jsonReport{
		Allowed:           d.Allowed,
		Project:           r.Project,
		Incomplete:        r.incomplete(),
		Changes:           r.Changes(),
		OtherChanges:      []jsonOther{},
		Violations:        nonNil(d.Violations),
		Warnings:          nonNil(d.Warnings),
		ExceptionsApplied: nonNil(d.ExceptionsApplied),
		AttestationsUsed:  nonNil(d.AttestationsUsed),
		LabelsNotCounted:  nonNil(d.LabelsNotCounted),
	}
	for _, o := range r.OtherChanges() {
		out.OtherChanges = append(out.OtherChanges, jsonOther{Address: o.Address, Type: o.Type, Actions: nonNil(o.Actions), ActionReason: o.ActionReason})
	}
	for i := range out.Changes {
		out.Changes[i].TerraformActions = nonNil(out.Changes[i].TerraformActions)
	}
	if r.Coordinator.Consulted {
		c := r.Coordinator
		out.Coordinator = &c
	}
	if r.LockWaits != nil {
		w := nonNil(r.LockWaits)
		out.StateLockWaits = &w
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Summary is the one-line verdict shared by every format and by check runs. It
// holds no plan-derived text: counts and fixed words only.
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
	if n := len(r.OtherChanges()); n > 0 {
		fmt.Fprintf(&b, "; %s", plural(n, "other resource change"))
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
	if r.incomplete() {
		b.WriteString("; incomplete plan")
	}
	return b.String()
}

// verdict is the first word of Summary.
func (r *Report) verdict() string {
	if r.Decision.Allowed {
		return "Allowed"
	}
	return "Denied"
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
	return stripMentions(r.Approvers)
}

// incompleteNote says what a plan with deferred changes means for the verdict.
const incompleteNote = "Terraform deferred some changes: more changes follow in a later plan, judged when it is made."
