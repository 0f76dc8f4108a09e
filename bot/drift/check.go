// Package drift judges and reports drift: a coordinator group whose live shard
// count differs from what the default branch's code asks for (someone scaled
// the stream through the admin API by hand; the stream-group module's
// terraform_data never reads the coordinator, so terraform plan says "No
// changes" forever), and what else Terraform would change there.
//
// Check judges one project's plan against live state (reusing policy.Effect,
// the judgement the drift warning is built on); Reporter keeps one GitHub
// issue per drifted project (label shardgate/drift, found by a hidden
// marker, edited in place, closed with a comment when the drift is gone);
// Store keeps the last result of every project and since when its drift was
// seen; Scheduler runs the checks of known repositories on a jittered
// interval. A drift check never applies anything. drift never imports bot:
// the bot gives it live state through LiveReader.
package drift

import (
	"context"
	"fmt"
	"time"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
)

// Status is the outcome of one project's drift check.
type Status string

const (
	// StatusClean: every coordinator group has the count the code asks for and
	// Terraform would change nothing (or the project has no coordinator group).
	StatusClean Status = "clean"
	// StatusDrifted: a group's live count differs from the code's, or
	// Terraform would change something in a project with coordinator groups.
	StatusDrifted Status = "drifted"
	// StatusError: the check could not tell (terraform failed, the
	// coordinator could not be read). Never reported as drift.
	StatusError Status = "error"
)

// LiveReader reads the live state of every stream a change set mentions, as
// the plan flow does (the bot's coordinator clients): the coordinator's
// reachability and the streams keyed by planparse.StreamKey.
type LiveReader interface {
	LiveState(ctx context.Context, cs *planparse.ChangeSet) (policy.Coordinator, map[string]policy.LiveStream)
}

// Group is one coordinator group whose live count differs from the code's.
// Names are as shown: a value the plan marks sensitive is report.Sensitive.
type Group struct {
	Address       string `json:"address"`
	StreamPrefix  string `json:"stream_prefix"`
	ConsumerGroup string `json:"consumer_group"`
	Coordinator   string `json:"coordinator"`
	// Desired is the count the code asks for.
	Desired int `json:"desired"`
	// Live is the coordinator's count; nil when the coordinator has no such
	// group in a stream it was read for.
	Live *int `json:"live"`
	// Delta is Live - Desired (how far the coordinator moved from the code);
	// -Desired when the group is missing.
	Delta int `json:"delta"`
	// Since is when this group's drift was first seen (kept in the Store
	// across checks while it lasts).
	Since time.Time `json:"since"`
}

// Key identifies a group across checks.
func (g Group) Key() string {
	return g.Coordinator + "\x00" + g.StreamPrefix + "\x00" + g.ConsumerGroup + "\x00" + g.Address
}

// Pending is a change Terraform would make: to a coordinator group (Action is
// the judged action: create, scale, ...) or to another resource (Type set).
type Pending struct {
	Address string   `json:"address"`
	Type    string   `json:"type,omitempty"`
	Action  string   `json:"action,omitempty"`
	Actions []string `json:"actions"`
	// Before and After are the shard counts of a coordinator change.
	Before *int `json:"before,omitempty"`
	After  *int `json:"after,omitempty"`
}

// Result is one project's drift check.
type Result struct {
	Repo    string `json:"repo"`
	Project string `json:"project"`
	// Branch and Commit are what was planned: the default branch's head.
	Branch    string    `json:"branch"`
	Commit    string    `json:"commit"`
	CheckedAt time.Time `json:"checked_at"`
	Status    Status    `json:"status"`
	// Managed is how many coordinator group instances the plan has.
	Managed int       `json:"managed"`
	Groups  []Group   `json:"groups"`
	Pending []Pending `json:"pending"`
	// Error says why the check could not tell (StatusError), redacted and on
	// one line; Details may add terraform's diagnostics.
	Error   string `json:"error,omitempty"`
	Details string `json:"details,omitempty"`
	// Desired are the shard counts the plan asks (planparse), which pull
	// requests of other repositories are judged with.
	Desired []planparse.Desired `json:"desired,omitempty"`
}

// Failed is the result of a check that could not tell.
func Failed(repo, project, branch, commit string, at time.Time, reason, details string) Result {
	return Result{Repo: repo, Project: project, Branch: branch, Commit: commit, CheckedAt: at.UTC(), Status: StatusError,
		Groups: []Group{}, Pending: []Pending{}, Error: report.FirstLine(reason), Details: details}
}

// Check judges one project's plan (planparse, noops included) against the live
// state read for it. An unreachable coordinator is an error, never drift nor
// clean.
func Check(cs *planparse.ChangeSet, coordinator policy.Coordinator, live map[string]policy.LiveStream) Result {
	res := Result{Groups: []Group{}, Pending: []Pending{}, Status: StatusClean}
	if cs == nil {
		res.Status, res.Error = StatusError, "no plan"
		return res
	}
	res.Managed = len(cs.Changes)
	if coordinator.Consulted && !coordinator.Reachable {
		res.Status, res.Error = StatusError, report.FirstLine("the coordinator could not be read: "+coordinator.Error)
		return res
	}
	sensitive := cs.SensitiveValues()
	hide := func(s string) string { return report.Hide(sensitive, s) }
	for _, d := range cs.Desired {
		// Shown on other repositories' pull requests: what the plan marks
		// sensitive is hidden (the stream, which they share, is theirs).
		d.Address, d.ConsumerGroup = hide(d.Address), hide(d.ConsumerGroup)
		res.Desired = append(res.Desired, d)
	}
	changes, drifted := policy.Effect(policy.Request{ChangeSet: cs, Coordinator: coordinator, Live: live})
	for _, c := range drifted {
		res.Groups = append(res.Groups, group(c, hide, c.ShardsBefore))
	}
	for _, c := range changes {
		switch {
		case c.Action == planparse.ActionNoop && c.ShardsAfter != nil && missing(live, c):
			res.Groups = append(res.Groups, group(c, hide, nil))
		case c.Action != planparse.ActionNoop && c.Action != planparse.ActionMove || c.Action == planparse.ActionMove && !isIn(drifted, c):
			res.Pending = append(res.Pending, Pending{Address: hide(c.Address), Action: string(c.Action),
				Actions: nonNil(c.TerraformActions), Before: c.ShardsBefore, After: c.ShardsAfter})
		}
	}
	for _, o := range cs.OtherChanges {
		res.Pending = append(res.Pending, Pending{Address: hide(o.Address), Type: hide(o.Type), Actions: nonNil(o.Actions)})
	}
	if res.Managed > 0 && (len(res.Groups) > 0 || len(res.Pending) > 0) {
		res.Status = StatusDrifted
	}
	return res
}

// missing says whether the coordinator was read for c's stream and has no
// group c's identity names.
func missing(live map[string]policy.LiveStream, c planparse.Change) bool {
	st, ok := live[c.Stream]
	if !ok {
		return false
	}
	for _, g := range st.Groups {
		if g.ConsumerGroup == c.ConsumerGroup {
			return false
		}
	}
	return true
}

func isIn(cs []planparse.Change, c planparse.Change) bool {
	for _, d := range cs {
		if d.Address == c.Address && d.Stream == c.Stream && d.ConsumerGroup == c.ConsumerGroup {
			return true
		}
	}
	return false
}

func group(c planparse.Change, hide func(string) string, live *int) Group {
	g := Group{Address: hide(c.Address), StreamPrefix: hide(c.StreamPrefix), ConsumerGroup: hide(c.ConsumerGroup),
		Coordinator: hide(c.Coordinator), Desired: *c.ShardsAfter}
	if live != nil {
		n := *live
		g.Live, g.Delta = &n, n-g.Desired
	} else {
		g.Delta = -g.Desired
	}
	return g
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Summary is one line about a result, for logs, replies and the CLI.
func (r Result) Summary() string {
	switch r.Status {
	case StatusDrifted:
		return fmt.Sprintf("drift: %d group(s) differ from the code, %d change(s) pending", len(r.Groups), len(r.Pending))
	case StatusError:
		return "the drift check failed: " + r.Error
	}
	return "no drift"
}
