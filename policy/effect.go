package policy

import (
	"slices"

	"github.com/shardgate/shardgate/planparse"
)

// judged is a change set as the coordinator will see it (docs/policy-input.md,
// "Effect"): what the rules judge, and what Decision.Changes reports.
type judged struct {
	// changes holds every change in plan order, noops included, with Stream set,
	// ShardsBefore the live count where the group was read, and the action of a
	// change whose apply calls the coordinator decided by that count.
	changes []planparse.Change
	// drift indexes the noops and moves (nothing is applied to the coordinator)
	// whose desired count differs from the live one.
	drift []int
}

// streamOf is the change's stream key. planparse sets Stream on every change it
// writes; a change set from an older producer has none, and is keyed by its
// coordinator and prefix as planparse would key it.
func streamOf(c *planparse.Change) string {
	if c.Stream != "" {
		return c.Stream
	}
	return planparse.StreamKey(c.Coordinator, c.StreamPrefix)
}

// desiredStream is streamOf for a desired count.
func desiredStream(d *planparse.Desired) string {
	if d.Stream != "" {
		return d.Stream
	}
	return planparse.StreamKey(d.Coordinator, d.StreamPrefix)
}

// liveCounts indexes the live shard count of every group by stream and group.
func liveCounts(live map[string]LiveStream) map[string]map[string]int {
	out := make(map[string]map[string]int, len(live))
	for key, s := range live {
		groups := make(map[string]int, len(s.Groups))
		for _, g := range s.Groups {
			groups[g.ConsumerGroup] = g.ShardCount
		}
		out[key] = groups
	}
	return out
}

// judge decides the effect of every change on the coordinator. The plan says what
// Terraform last applied; the coordinator may have moved since (another module, an
// operator, a failed apply), and what an apply does is decided against what the
// coordinator has when it runs. It never modifies req. The judged changes share
// req's array until one differs from the plan's (a live count read, another
// action): a check without live state holds one copy of a large plan's changes,
// not two. Neither is written after.
func judge(req Request) judged {
	src := req.ChangeSet.Changes
	live := liveCounts(req.Live)
	j := judged{changes: src}
	copied := false
	for i := range src {
		s := &src[i]
		stream, before, action := streamOf(s), s.ShardsBefore, s.Action
		n, isLive := live[stream][s.ConsumerGroup]
		switch {
		case isLive:
			count := n // its own variable: only a live count is allocated
			before = &count
		case s.Tainted:
			// The prior state of a tainted instance is what its failed apply
			// wanted, not what the coordinator has (planparse leaves it nil).
			before = nil
		}
		switch {
		case s.CallsCoordinator():
			action = effectAction(s.ShardsAfter, before, s.Action, isLive)
		case isLive && isDriftable(s.Action) && s.ShardsAfter != nil && *s.ShardsAfter != n:
			j.drift = append(j.drift, i)
		}
		if stream == s.Stream && before == s.ShardsBefore && action == s.Action {
			continue
		}
		if !copied {
			j.changes, copied = slices.Clone(src), true
		}
		c := &j.changes[i] // a copy: slices are shared but never written
		c.Stream, c.ShardsBefore, c.Action = stream, before, action
	}
	if j.changes == nil {
		j.changes = []planparse.Change{}
	}
	return j
}

// isDriftable holds for the actions that apply nothing to the coordinator while
// the code keeps asking for a count: the difference from the live count then
// stays.
func isDriftable(a planparse.Action) bool {
	return a == planparse.ActionNoop || a == planparse.ActionMove
}

// effectAction is the action of a change whose apply calls the coordinator: the
// module's apply creates the group when the coordinator lacks it, then scales the
// stream when the group's count differs from the desired one.
func effectAction(after, before *int, action planparse.Action, isLive bool) planparse.Action {
	switch {
	case after == nil:
		// An unknown or invalid desired count is denied on its own; nothing to
		// compare.
		return action
	case before == nil:
		// A group the coordinator does not have (as far as anyone read) is
		// created at the desired count, also in a stream with other groups: the
		// coordinator's create keeps the group's own count. Anything else that
		// calls the coordinator from an unknown count (a tainted retry offline)
		// may scale the stream.
		if action == planparse.ActionCreate {
			return action
		}
		return planparse.ActionScale
	case *before != *after:
		return planparse.ActionScale
	case action == planparse.ActionScale || action == planparse.ActionCreate && isLive:
		// The coordinator already has the desired count: the apply calls it and
		// finds nothing to scale (nor, for a create, to create).
		return planparse.ActionUpdate
	}
	return action
}

// Effect judges req's change set against its live state as Evaluate does,
// without evaluating any rule: changes are Decision.Changes, and drifted are
// those of them the plan leaves alone (noops and moves) while the coordinator
// has another count than the code asks for — the instances of the drift
// warning, in plan order. Drift checks read it.
func Effect(req Request) (changes, drifted []planparse.Change) {
	if req.ChangeSet == nil {
		return []planparse.Change{}, []planparse.Change{}
	}
	j := judge(req)
	drifted = make([]planparse.Change, 0, len(j.drift))
	for _, i := range j.drift {
		drifted = append(drifted, j.changes[i])
	}
	return nonNil(j.changes), drifted
}
