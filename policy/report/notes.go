package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/internal/mdtext"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

// style renders the two kinds of words in a sentence: quote for names and
// commands (plan-derived or to be copied), text for everything else. The text,
// markdown and table renderings share one wording through it.
type style struct {
	quote func(string) string
	text  func(string) string
}

// plainStyle is for terminals: names in single quotes, everything sanitized.
var plainStyle = style{
	quote: func(s string) string { return "'" + mdtext.Sanitize(s) + "'" },
	text:  mdtext.Sanitize,
}

func (w mdWriter) style() style { return style{quote: w.code, text: w.text} }

// tableStyle is for table cells, where code spans must escape '|'.
func (w mdWriter) tableStyle() style { return style{quote: w.cell, text: w.text} }

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

// Resolution says, in plain text, how a reviewer can clear a violation.
func (r *Report) Resolution(v policy.Violation) string {
	r = r.shown()
	if r.hide != nil {
		v = hideIn(r.hide, v)
	}
	return r.resolution(v, plainStyle)
}

// resolution builds the resolution of v in the style st.
func (r *Report) resolution(v policy.Violation, st style) string {
	quote, text := st.quote, st.text
	var fix string
	switch v.Rule {
	case policy.RuleConflictingShardCount:
		fix = text("Make every instance of the stream ask for the same shard_count (scale is stream-wide).")
	case policy.RuleUnknownValue:
		fix = text("Make the stream prefix, consumer group and shard count known at plan time (no values computed during apply).")
	case policy.RuleInvalidShardCount:
		fix = text("Make the shard count a whole number of at least 1.")
	case policy.RuleCoordinatorUnreachable:
		fix = text("shardgate could not read the live coordinator state, so it cannot judge the change; re-plan once the coordinator is reachable.")
	case policy.RulePolicyError:
		fix = text("The policies could not be evaluated; this is a shardgate or policy problem, not one of the pull request.")
	case policy.RuleQuiesceAttestation:
		if r.Local {
			fix = text("Pause the producers of ") + quote(v.StreamPrefix) + text(" and drain their retries, then run again with ") +
				quote("--attest "+v.StreamPrefix) + text(".")
			break
		}
		fix = text("Pause the producers of ") + quote(v.StreamPrefix) + text(" and drain their retries, then "+r.approvers()+" comments ") +
			quote("/shardgate attest quiesce "+v.StreamPrefix) + text(".")
	case policy.RuleNoDestroy:
		fix = text("Keep the group in the configuration.")
	case policy.RuleShardDelta:
		fix = text("Scale in smaller steps.")
	default:
		fix = text("Change the plan so the rule holds.")
	}
	if v.Waivable && v.ExceptionLabel != "" && r.Local {
		return fix + text(" Or, once an approver agrees, run again with ") + quote("--label "+v.ExceptionLabel) + text(".")
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
func shardsCell(c planparse.Change, st style) string {
	after := shards(c.ShardsAfter, isUnknown(c, planparse.FieldShardCount))
	if c.InvalidShardCount != "" {
		after = st.quote(c.InvalidShardCount) + st.text(" (invalid)")
	}
	before := shards(c.ShardsBefore, false)
	if c.ShardsBefore == nil && (c.Action == planparse.ActionScale || c.Action == planparse.ActionUpdate) {
		// The coordinator is called, from a count nobody could read.
		before = "unknown"
	}
	switch {
	case c.Action == planparse.ActionCreate:
		return after
	case c.Action == planparse.ActionDelete:
		return before + " → (deleted)"
	case c.Action == planparse.ActionUnmanage:
		return before + " → (kept by the coordinator)"
	case drifted(c):
		return before + " live, " + after + " configured"
	}
	return before + " → " + after
}

// note explains what is special about a change; multi says the changes span
// more than one coordinator, so each names its own.
func note(c planparse.Change, st style, multi bool) string {
	var parts []string
	if c.Tainted || c.ActionReason == "replace_because_tainted" {
		parts = append(parts, st.text(taintedNote(c)))
	} else if c.ActionReason == "replace_by_request" {
		parts = append(parts, st.text("replace requested (-replace)"))
	}
	switch {
	case c.Action == planparse.ActionMove:
		parts = append(parts, st.text("moved from ")+st.quote(c.MovedFrom)+st.text("; the coordinator is not called"))
	case c.MovedFrom != "":
		parts = append(parts, st.text("moved from ")+st.quote(c.MovedFrom))
	}
	switch {
	case c.Action == planparse.ActionUnmanage && c.ManagedBy != "":
		parts = append(parts, st.text("ownership moves to ")+st.quote(c.ManagedBy)+st.text(", which still manages the group; the coordinator is not called"))
	case c.Action == planparse.ActionUnmanage:
		parts = append(parts, st.text("Terraform stops managing it; the coordinator keeps the group"))
	case c.Action == planparse.ActionDelete:
		parts = append(parts, st.text("deletes the group's coordinator metadata"))
	case drifted(c):
		parts = append(parts, st.text("drift: the live count is not the configured one, and this plan does not change it"))
	}
	if c.InvalidShardCount != "" {
		parts = append(parts, st.text("shard count ")+st.quote(c.InvalidShardCount)+st.text(" is not a whole number of at least 1"))
	}
	if len(c.Unknown) > 0 {
		parts = append(parts, st.text("unknown at plan time: "+strings.Join(c.Unknown, ", ")))
	}
	if len(c.Missing) > 0 {
		q := make([]string, len(c.Missing))
		for i, m := range c.Missing {
			q[i] = st.quote(m)
		}
		parts = append(parts, st.text("cannot be judged, the resource lacks ")+strings.Join(q, ", "))
	}
	if multi && c.Coordinator != "" {
		parts = append(parts, st.text("coordinator ")+st.quote(c.Coordinator))
	}
	return strings.Join(parts, st.text("; "))
}

// taintedNote describes a retry of a failed apply: the count it starts from is
// the live one, or unknown (the prior state's count is never trusted then).
func taintedNote(c planparse.Change) string {
	s := "retry of a failed apply; starting count unknown"
	if c.ShardsBefore != nil && c.Action != planparse.ActionCreate {
		s = fmt.Sprintf("retry of a failed apply; live count %d", *c.ShardsBefore)
	}
	if c.PriorShards != nil {
		s += fmt.Sprintf(" (the prior state says %d)", *c.PriorShards)
	}
	return s
}

// multiCoordinator reports changes that name more than one coordinator.
func multiCoordinator(changes []planparse.Change) bool {
	seen := ""
	for _, c := range changes {
		if c.Coordinator == "" {
			continue
		}
		if seen != "" && c.Coordinator != seen {
			return true
		}
		seen = c.Coordinator
	}
	return false
}

// otherActionOrder lists other resources' actions, most destructive first.
var otherActionOrder = []string{"destroy", "replace", "forget", "forget and create", "create", "update", "read"}

// ActionWords names what Terraform's actions do to a resource, for people
// ("destroy", "replace", ...): the apply guard words its differences with it.
func ActionWords(actions []string) string { return otherAction(actions) }

// otherAction names what a plan does to another resource, in Terraform's words.
func otherAction(actions []string) string {
	switch strings.Join(actions, ",") {
	case "create":
		return "create"
	case "update":
		return "update"
	case "delete":
		return "destroy"
	case "delete,create", "create,delete":
		return "replace"
	case "forget":
		return "forget"
	case "forget,create", "create,forget":
		return "forget and create"
	case "read":
		return "read"
	}
	return "change (" + strings.Join(actions, ", ") + ")"
}

// otherCounts is "1 to destroy, 2 to update" for the other changes.
func otherCounts(others []planparse.OtherChange) string {
	counts := map[string]int{}
	var odd []string
	for _, o := range others {
		a := otherAction(o.Actions)
		if counts[a] == 0 && !contains(otherActionOrder, a) {
			odd = append(odd, a)
		}
		counts[a]++
	}
	sort.Strings(odd)
	var parts []string
	for _, a := range append(append([]string{}, otherActionOrder...), odd...) {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d to %s", counts[a], a))
		}
	}
	return strings.Join(parts, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
