package planparse

import "slices"

// sides is what the two sides of one entry say about the coordinator group.
type sides struct{ before, after ident }

// changes applies the mapping documented in doc.go.
func (p *parser) changes(r *resource, k Kind, o op, s sides) {
	create := func() {
		a := ActionCreate
		if k == KindShardCount {
			a = ActionScale // applies a count to a group that exists: from a count the plan cannot know
		}
		p.adds = append(p.adds, p.collected.len())
		p.newChange(r, k, a, s.after).fromAfter(s.after)
	}
	remove := func(destroy bool) {
		if destroy {
			p.newChange(r, k, ActionDelete, s.before).fromBefore(s.before)
			return
		}
		p.removes = append(p.removes, p.collected.len())
		p.newChange(r, k, ActionUnmanage, s.before).fromBefore(s.before)
	}
	switch o {
	case opNoop:
		p.newChange(r, k, ActionNoop, s.after).fromBefore(s.before).fromAfter(s.after)
	case opCreate:
		create()
	case opDelete:
		remove(k == KindGroup) // only the provider group resource owns the metadata
	case opForget:
		remove(false)
	case opUpdate, opReplace, opForgetReplace:
		switch {
		case k == KindGroup && (o == opReplace || o == opUpdate && !sameGroup(s.before, s.after)):
			remove(true)
			create()
		case !sameGroup(s.before, s.after):
			create()
			remove(false)
		case sameCount(s.before.shards, s.after.shards) && s.before.countReadable() && s.after.countReadable():
			p.newChange(r, k, ActionUpdate, s.after).fromBefore(s.before).fromAfter(s.after)
		default:
			p.newChange(r, k, ActionScale, s.after).fromBefore(s.before).fromAfter(s.after)
		}
	}
}

// newChange appends a change of the group id names and returns it.
func (p *parser) newChange(r *resource, k Kind, a Action, id ident) *Change {
	return p.collected.add(Change{
		Address:          r.address,
		Kind:             k,
		StreamPrefix:     id.prefix,
		ConsumerGroup:    id.group,
		CoordinatorURL:   id.url,
		Coordinator:      id.coord,
		Stream:           id.stream,
		Action:           a,
		ActionReason:     r.actionReason,
		TerraformActions: r.actions,
	})
}

// fromBefore takes the prior count, trusted until a taint says otherwise.
func (c *Change) fromBefore(before ident) *Change {
	c.ShardsBefore, c.PriorShards = before.shards, before.shards
	c.Missing = mergeFields(c.Missing, before.missing)
	c.Sensitive = mergeFields(c.Sensitive, before.sensitive)
	return c
}

// fromAfter takes the desired count and what is unknown, missing or invalid in it.
func (c *Change) fromAfter(after ident) *Change {
	c.ShardsAfter = after.shards
	c.Unknown = after.unknown
	c.InvalidShardCount = after.invalid
	c.Missing = mergeFields(c.Missing, after.missing)
	c.Sensitive = mergeFields(c.Sensitive, after.sensitive)
	return c
}

// mergeFields is the union of two lists of identFields, in their order.
func mergeFields(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	var out []string
	for _, f := range identFields {
		if slices.Contains(a, f) || slices.Contains(b, f) {
			out = append(out, f)
		}
	}
	return out
}

// streamOf is the stream key of id, "" when its prefix or (module) coordinator
// is not known.
func (p *parser) streamOf(module bool, id ident) string {
	if id.isUnknown(FieldStreamPrefix) || id.isMissing(FieldStreamPrefix) ||
		module && id.isUnknown(FieldCoordinatorURL) {
		return ""
	}
	if id.coord == "" {
		return id.prefix
	}
	key := [2]string{id.coord, id.prefix}
	if c := &p.sc.lastStream; c.key == key {
		return c.stream
	}
	s, ok := p.sc.streams[key]
	if !ok {
		if p.sc.streams == nil {
			p.sc.streams = make(map[[2]string]string)
		}
		s = StreamKey(id.coord, id.prefix)
		p.sc.streams[key] = s
	}
	p.sc.lastStream.key, p.sc.lastStream.stream = key, s
	return s
}

// taint marks the changes from index first on as the retry of a failed apply.
func (p *parser) taint(first int) {
	for i := first; i < p.collected.len(); i++ {
		p.collected.at(i).taint()
	}
}

// taint marks the change as the retry of a failed apply: the prior count is not
// trusted, and the apply calls the coordinator's scale.
func (c *Change) taint() {
	c.Tainted, c.ShardsBefore = true, nil
	if c.Action == ActionUpdate {
		c.Action = ActionScale
	}
}

// finish applies what is known only once every entry is read: taints the prior
// state shows, and the pairing of removals with additions of one identity.
func (p *parser) finish() {
	p.cs.Changes = p.collected.slice()
	p.cs.Desired = p.desired.slice()
	if p.needPrior {
		p.priorTaints()
	}
	p.pairMoves()
	p.ownershipMoves()
	// These grew by doubling, one entry in ten of a large plan: copied to their
	// size, they hold no spare capacity through the policy and the report.
	p.cs.Resources = fit(p.cs.Resources)
	p.cs.OtherChanges = fit(p.cs.OtherChanges)
}

// fit returns s in an array of its length: s itself when it has no spare
// capacity. Never nil: the change set is policy input, where null and [] differ.
func fit[T any](s []T) []T {
	if len(s) == cap(s) && s != nil {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

// priorTaints marks the changes of instances the prior state says are tainted.
// Scanning the prior state costs a tenth of a large plan's parse, so it is done
// only where the plan itself may not say it: a replace without an action_reason
// (terraform before 1.2), and a removal about to be paired (pairMoves), whose
// prior count decides between a move and a scale.
func (p *parser) priorTaints() {
	if p.priorTainted {
		return
	}
	p.priorTainted = true
	if p.tainted == nil && p.priorState != nil {
		p.tainted = taintedAddresses(p.priorState)
	}
	for i := range p.cs.Changes {
		if c := &p.cs.Changes[i]; !c.Tainted && p.tainted[c.Address] {
			c.taint()
		}
	}
}
