package bot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/planparse"
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
// state before (the starting point) and after (the end state), keyed by
// "stream/group", and which groups it actually changes.
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
		key := c.StreamPrefix + "/" + c.ConsumerGroup
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
		default: // scale, update, noop
			managed.Shards = c.ShardsBefore
			e.before[key] = managed
			e.after[key] = GroupEnd{Exists: true, Managed: true, Shards: c.ShardsAfter}
		}
		if c.Action != planparse.ActionNoop {
			e.changed[key] = true
		}
	}
	return e
}

// guardResult compares the plan of the merge commit with the reviewed one.
type guardResult struct {
	Equal       bool
	Differences []string
}

// comparePlans decides whether the merge commit's plan does what was reviewed:
// for every group either plan changes, the same end state (exists, managed,
// target shard count) reached from the same starting point. Groups neither plan
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
	return guardResult{Equal: len(diffs) == 0, Differences: diffs}
}

// endStateFingerprint identifies what a plan leaves on the coordinator for the
// groups it changes; the audit record keeps it for the reviewed and applied plans.
func endStateFingerprint(cs *planparse.ChangeSet) string {
	e := effectOf(cs)
	var lines []string
	for k := range e.changed {
		lines = append(lines, k+" "+e.after[k].String())
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// streamsOf lists the stream prefixes a change set changes, sorted.
func streamsOf(cs *planparse.ChangeSet) []string {
	seen := map[string]bool{}
	var out []string
	if cs == nil {
		return out
	}
	for _, c := range cs.Changes {
		if c.Action != planparse.ActionNoop && c.StreamPrefix != "" && !seen[c.StreamPrefix] {
			seen[c.StreamPrefix] = true
			out = append(out, c.StreamPrefix)
		}
	}
	sort.Strings(out)
	return out
}

// scaleTargets are the shard counts the change set sets per stream (scale or
// create with a known count): what convergence waits for.
func scaleTargets(cs *planparse.ChangeSet) map[string]int {
	out := map[string]int{}
	if cs == nil {
		return out
	}
	for _, c := range cs.Changes {
		if (c.Action == planparse.ActionScale || c.Action == planparse.ActionCreate) && c.ShardsAfter != nil {
			out[c.StreamPrefix] = *c.ShardsAfter
		}
	}
	return out
}
