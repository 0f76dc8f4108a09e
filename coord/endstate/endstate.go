// Package endstate is the end-state guard: it decides whether the plan of a
// merge commit does what the reviewed plan did, group by group (coordinator,
// stream prefix, consumer group) and for every other resource change, and it
// names what a change set touches (its streams, the shard counts its applies
// ask for) and the fingerprint the audit record keeps.
package endstate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy/report"
)

// Group is one coordinator group as a plan leaves it (or finds it).
type Group struct {
	// Exists is false when the group's metadata is deleted (or was never there).
	Exists bool `json:"exists"`
	// Managed is whether Terraform manages the group.
	Managed bool `json:"managed"`
	// Shards is the target shard count; nil when unknown or not managed.
	Shards *int `json:"shards"`
}

// String says the group's state for people, as the guard's differences do.
func (g Group) String() string {
	switch {
	case !g.Exists:
		return "absent"
	case !g.Managed:
		return "kept by the coordinator, not managed by Terraform"
	case g.Shards == nil:
		return "managed, shard count unknown"
	}
	return fmt.Sprintf("managed at %d shards", *g.Shards)
}

func (g Group) equal(o Group) bool {
	if g.Exists != o.Exists || g.Managed != o.Managed || (g.Shards == nil) != (o.Shards == nil) {
		return false
	}
	return g.Shards == nil || *g.Shards == *o.Shards
}

// planEffect is what a plan does to each coordinator group it mentions: the
// state before (the starting point) and after (the end state), keyed by the
// group's full identity (groupKey), and which groups it actually changes.
type planEffect struct {
	before, after map[string]Group
	changed       map[string]bool
}

func effectOf(cs *planparse.ChangeSet) planEffect {
	e := planEffect{before: map[string]Group{}, after: map[string]Group{}, changed: map[string]bool{}}
	if cs == nil {
		return e
	}
	for _, c := range cs.Changes {
		key := groupKey(c)
		managed := Group{Exists: true, Managed: true}
		switch c.Action {
		case planparse.ActionCreate:
			if _, seen := e.before[key]; !seen {
				e.before[key] = Group{}
			}
			e.after[key] = Group{Exists: true, Managed: true, Shards: c.ShardsAfter}
		case planparse.ActionDelete:
			e.before[key] = Group{Exists: true, Managed: true, Shards: c.ShardsBefore}
			if _, seen := e.after[key]; !seen {
				e.after[key] = Group{}
			}
		case planparse.ActionUnmanage:
			e.before[key] = Group{Exists: true, Managed: true, Shards: c.ShardsBefore}
			if _, seen := e.after[key]; !seen {
				e.after[key] = Group{Exists: true}
			}
		default: // scale, update, move, noop
			managed.Shards = c.ShardsBefore
			if c.Tainted {
				// Its prior count is what the failed apply wanted, not trusted by
				// the gate (the live count is, at judging); between two plans it
				// still says where the last attempt left the state.
				managed.Shards = c.PriorShards
			}
			e.before[key] = managed
			e.after[key] = Group{Exists: true, Managed: true, Shards: c.ShardsAfter}
		}
		if c.Action != planparse.ActionNoop {
			e.changed[key] = true
		}
	}
	return e
}

// groupKey names a group by its identity: coordinator, stream prefix and
// consumer group. Two coordinators with one prefix are two streams.
func groupKey(c planparse.Change) string {
	key := c.StreamPrefix + "/" + c.ConsumerGroup
	if coordinator := CoordinatorOf(c); coordinator != "" {
		key += " at " + coordinator
	}
	return key
}

// CoordinatorOf is the change's normalized coordinator URL. Change sets stored
// before planparse normalized it carry only the URL as written.
func CoordinatorOf(c planparse.Change) string {
	if c.Coordinator != "" {
		return c.Coordinator
	}
	return planparse.NormalizeURL(c.CoordinatorURL)
}

// StreamOf is the change's stream key (planparse.StreamKey).
func StreamOf(c planparse.Change) string {
	if c.Stream != "" {
		return c.Stream
	}
	return planparse.StreamKey(CoordinatorOf(c), c.StreamPrefix)
}

// Result is what Compare found.
type Result struct {
	// Equal is true when the merge commit's plan does what was reviewed.
	Equal bool
	// Differences says, one line each and sorted by group, what it does otherwise.
	Differences []string
}

// Compare decides whether the merge commit's plan does what was reviewed:
// every other resource change the same (compareOther), and for every group
// either plan changes, the same end state (exists, managed, target shard count)
// reached from the same starting point. Groups neither plan
// changes are not compared (another stream moved by another merge is not this
// review's business). Terraform actions are not compared: after a crash cut a
// replace short, the instance is gone from the state and the plan is a create of
// the very same target; resuming accepts that as the reviewed change, and
// accepts a starting point already at the reviewed end state.
func Compare(reviewed, current *planparse.ChangeSet, resuming bool) Result {
	r, c := effectOf(reviewed), effectOf(current)
	keys := map[string]bool{}
	for k := range r.changed {
		keys[k] = true
	}
	for k := range c.changed {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var diffs []string
	for _, k := range sorted {
		ra, rok := r.after[k]
		ca, cok := c.after[k]
		switch {
		case !rok:
			diffs = append(diffs, fmt.Sprintf("%s: not in the reviewed plan; the merge commit's plan leaves it %s", k, ca))
			continue
		case !cok:
			diffs = append(diffs, fmt.Sprintf("%s: the reviewed plan leaves it %s; the merge commit's plan does not mention it", k, ra))
			continue
		case !ra.equal(ca):
			diffs = append(diffs, fmt.Sprintf("%s: reviewed end state %s, merge commit's %s", k, ra, ca))
			continue
		}
		rb, cb := r.before[k], c.before[k]
		if rb.equal(cb) || resuming && (!cb.Exists || cb.equal(ra)) {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s: reviewed from %s, but it is now %s (main moved, drift, or an apply by hand)", k, rb, cb))
	}
	diffs = append(diffs, compareOther(otherOf(reviewed), otherOf(current), resuming)...)
	return Result{Equal: len(diffs) == 0, Differences: diffs}
}

func otherOf(cs *planparse.ChangeSet) []planparse.OtherChange {
	if cs == nil {
		return nil
	}
	return cs.OtherChanges
}

// compareOther compares the changes of every resource that is not a coordinator
// shape by address, actions and fingerprint (the after-values a reviewer saw,
// sensitive ones redacted): the review must have seen all that the apply does.
// Resuming after a crash, a reviewed change may be done already (gone from the
// plan) or cut short (a replace re-planned as a create of the same values), so
// only the address and fingerprint must match then; a change the review did not
// show is refused either way.
func compareOther(reviewed, current []planparse.OtherChange, resuming bool) []string {
	byAddr := make(map[string]planparse.OtherChange, len(reviewed))
	for _, o := range reviewed {
		byAddr[o.Address] = o
	}
	var diffs []string
	seen := make(map[string]bool, len(current))
	for _, c := range current {
		seen[c.Address] = true
		r, ok := byAddr[c.Address]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s (%s): %s is not in the reviewed plan", c.Address, c.Type, actionWords(c.Actions)))
		case r.Fingerprint != c.Fingerprint:
			diffs = append(diffs, fmt.Sprintf("%s (%s): the merge commit's plan changes it differently from the reviewed plan (%s)", c.Address, c.Type, actionWords(c.Actions)))
		case !resuming && !slices.Equal(r.Actions, c.Actions):
			diffs = append(diffs, fmt.Sprintf("%s (%s): reviewed %s, merge commit's %s", c.Address, c.Type, actionWords(r.Actions), actionWords(c.Actions)))
		}
	}
	if resuming {
		return diffs
	}
	for _, r := range reviewed {
		if !seen[r.Address] {
			diffs = append(diffs, fmt.Sprintf("%s (%s): the reviewed plan would %s it; the merge commit's plan does not", r.Address, r.Type, actionWords(r.Actions)))
		}
	}
	return diffs
}

// actionWords says what Terraform actions do, for people.
func actionWords(actions []string) string { return report.ActionWords(actions) }

// Fingerprint identifies what a plan leaves on the coordinator for the
// groups it changes, and the other resource changes it makes; the audit record
// keeps it for the reviewed and applied plans.
func Fingerprint(cs *planparse.ChangeSet) string {
	e := effectOf(cs)
	var lines []string
	for k := range e.changed {
		lines = append(lines, k+" "+e.after[k].String())
	}
	for _, o := range otherOf(cs) {
		lines = append(lines, "other "+o.Address+" "+o.Fingerprint)
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// Streams lists the streams (planparse.StreamKey) a change set changes, sorted:
// the apply serializes on them.
func Streams(cs *planparse.ChangeSet) []string {
	seen := map[string]bool{}
	var out []string
	if cs == nil {
		return out
	}
	for _, c := range cs.Changes {
		if k := StreamOf(c); c.Action != planparse.ActionNoop && c.StreamPrefix != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// ScaleTargets are the shard counts per stream key that the changes' applies ask
// the coordinator for: every change whose apply calls it (create, scale, update,
// a tainted retry) with a known count. Pre-flight and convergence cover these.
// Pass judged changes (policy.Decision.Changes), so a create of a group the
// coordinator has at another count counts as the scale it is.
func ScaleTargets(changes []planparse.Change) map[string]int {
	out := map[string]int{}
	for _, c := range changes {
		if c.CallsCoordinator() && c.ShardsAfter != nil {
			out[StreamOf(c)] = *c.ShardsAfter
		}
	}
	return out
}
