package bot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/report"
)

// GroupEnd is one coordinator group as a plan leaves it (or finds it).
type GroupEnd struct {
	// Exists is false when the group's metadata is deleted (or was never there).
	Exists bool `json:"exists"`
	// Managed is whether Terraform manages the group.
	Managed bool `json:"managed"`
	// Shards is the target shard count; nil when unknown or not managed.
	Shards *int `json:"shards"`
}

func (g GroupEnd) String() string {
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

func (g GroupEnd) equal(o GroupEnd) bool {
	if g.Exists != o.Exists || g.Managed != o.Managed || (g.Shards == nil) != (o.Shards == nil) {
		return false
	}
	return g.Shards == nil || *g.Shards == *o.Shards
}

// planEffect is what a plan does to each coordinator group it mentions: the
// state before (the starting point) and after (the end state), keyed by the
// group's full identity (groupKey), and which groups it actually changes.
type planEffect struct {
	before, after map[string]GroupEnd
	changed       map[string]bool
}

func effectOf(cs *planparse.ChangeSet) planEffect {
	e := planEffect{before: map[string]GroupEnd{}, after: map[string]GroupEnd{}, changed: map[string]bool{}}
	if cs == nil {
		return e
	}
	for _, c := range cs.Changes {
		key := groupKey(c)
		managed := GroupEnd{Exists: true, Managed: true}
		switch c.Action {
		case planparse.ActionCreate:
			if _, seen := e.before[key]; !seen {
				e.before[key] = GroupEnd{}
			}
			e.after[key] = GroupEnd{Exists: true, Managed: true, Shards: c.ShardsAfter}
		case planparse.ActionDelete:
			e.before[key] = GroupEnd{Exists: true, Managed: true, Shards: c.ShardsBefore}
			if _, seen := e.after[key]; !seen {
				e.after[key] = GroupEnd{}
			}
		case planparse.ActionUnmanage:
			e.before[key] = GroupEnd{Exists: true, Managed: true, Shards: c.ShardsBefore}
			if _, seen := e.after[key]; !seen {
				e.after[key] = GroupEnd{Exists: true}
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
			e.after[key] = GroupEnd{Exists: true, Managed: true, Shards: c.ShardsAfter}
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
	if coordinator := coordinatorOf(c); coordinator != "" {
		key += " at " + coordinator
	}
	return key
}

// coordinatorOf is the change's normalized coordinator URL. Change sets stored
// before planparse normalized it carry only the URL as written.
func coordinatorOf(c planparse.Change) string {
	if c.Coordinator != "" {
		return c.Coordinator
	}
	return planparse.NormalizeURL(c.CoordinatorURL)
}

// streamOf is the change's stream key (planparse.StreamKey).
func streamOf(c planparse.Change) string {
	if c.Stream != "" {
		return c.Stream
	}
	return planparse.StreamKey(coordinatorOf(c), c.StreamPrefix)
}

// guardResult compares the plan of the merge commit with the reviewed one.
type guardResult struct {
	Equal       bool
	Differences []string
}

// comparePlans decides whether the merge commit's plan does what was reviewed:
// every other resource change the same (compareOther), and for every group
// either plan changes, the same end state (exists, managed, target shard count)
// reached from the same starting point. Groups neither plan
// changes are not compared (another stream moved by another merge is not this
// review's business). Terraform actions are not compared: after a crash cut a
// replace short, the instance is gone from the state and the plan is a create of
// the very same target; resuming accepts that as the reviewed change, and
// accepts a starting point already at the reviewed end state.
func comparePlans(reviewed, current *planparse.ChangeSet, resuming bool) guardResult {
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
	return guardResult{Equal: len(diffs) == 0, Differences: diffs}
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

// endStateFingerprint identifies what a plan leaves on the coordinator for the
// groups it changes, and the other resource changes it makes; the audit record
// keeps it for the reviewed and applied plans.
func endStateFingerprint(cs *planparse.ChangeSet) string {
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

// streamsOf lists the streams (planparse.StreamKey) a change set changes, sorted:
// the apply serializes on them.
func streamsOf(cs *planparse.ChangeSet) []string {
	seen := map[string]bool{}
	var out []string
	if cs == nil {
		return out
	}
	for _, c := range cs.Changes {
		if k := streamOf(c); c.Action != planparse.ActionNoop && c.StreamPrefix != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// scaleTargets are the shard counts per stream key that the changes' applies ask
// the coordinator for: every change whose apply calls it (create, scale, update,
// a tainted retry) with a known count. Pre-flight and convergence cover these.
// Pass judged changes (policy.Decision.Changes), so a create of a group the
// coordinator has at another count counts as the scale it is.
func scaleTargets(changes []planparse.Change) map[string]int {
	out := map[string]int{}
	for _, c := range changes {
		if c.CallsCoordinator() && c.ShardsAfter != nil {
			out[streamOf(c)] = *c.ShardsAfter
		}
	}
	return out
}

// judgedChanges are a decision's judged changes, or the plan's when the record
// predates them.
func judgedChanges(cs *planparse.ChangeSet, dec policy.Decision) []planparse.Change {
	if dec.Changes != nil {
		return dec.Changes
	}
	if cs == nil {
		return nil
	}
	return cs.Changes
}
