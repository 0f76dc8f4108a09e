package planparse

import (
	"bytes"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// groupKey is a group's identity, with the shape that holds it.
type groupKey struct {
	kind                  Kind
	coord, prefix, groupN string
}

// pairable reports whether c names its group fully: an identity with unknown or
// missing parts is never taken for another.
func pairable(c *Change) bool {
	return c.Stream != "" && !slices.Contains(c.Unknown, FieldConsumerGroup) && !slices.Contains(c.Missing, FieldConsumerGroup)
}

// pairMoves turns an unmanage and a create of one identity at two addresses (a
// module moved without a `moved` block, a renamed for_each key) into one change
// at the new address: a move when the count stays, else a scale. A provider
// group that is destroyed is never paired: its metadata really goes.
func (p *parser) pairMoves() {
	if len(p.removes) == 0 || len(p.adds) == 0 {
		return
	}
	key := func(c *Change) groupKey {
		return groupKey{kind: c.Kind, coord: c.Coordinator, prefix: c.StreamPrefix, groupN: c.ConsumerGroup}
	}
	adds := make(map[groupKey][]int)
	for _, i := range p.adds {
		if c := &p.cs.Changes[i]; pairable(c) {
			adds[key(c)] = append(adds[key(c)], i)
		}
	}
	var drop []bool
	for _, ri := range p.removes {
		old := &p.cs.Changes[ri]
		if !pairable(old) {
			continue
		}
		list := adds[key(old)]
		// The same address twice is a deposed object and its successor, not a move.
		j := slices.IndexFunc(list, func(ai int) bool { return p.cs.Changes[ai].Address != old.Address })
		if j < 0 {
			continue
		}
		p.priorTaints() // before the old count is taken
		p.cs.Changes[list[j]].moveFrom(old)
		adds[key(old)] = slices.Delete(list, j, j+1)
		if drop == nil {
			drop = make([]bool, len(p.cs.Changes))
		}
		drop[ri] = true
	}
	if drop == nil {
		return
	}
	n := 0
	for i := range p.cs.Changes {
		if !drop[i] {
			p.cs.Changes[n] = p.cs.Changes[i]
			n++
		}
	}
	clear(p.cs.Changes[n:])
	p.cs.Changes = p.cs.Changes[:n]
}

// ownershipMoves marks each unmanage whose group another instance of the plan
// still manages (ManagedBy): one of two declarations of a group going away. Only
// an instance with an after side manages it, and a group named with unknown or
// missing parts is never taken for another.
func (p *parser) ownershipMoves() {
	if len(p.removes) == 0 {
		return
	}
	// Only the groups of the unmanages are looked up: a map of every group of a
	// large plan cost more memory than the rest of this parse's finish.
	type manager struct {
		address string
		found   bool
	}
	managers := make(map[groupKey]manager)
	for i := range p.cs.Changes {
		if c := &p.cs.Changes[i]; c.Action == ActionUnmanage && pairable(c) {
			managers[groupKey{kind: c.Kind, coord: c.Coordinator, prefix: c.StreamPrefix, groupN: c.ConsumerGroup}] = manager{}
		}
	}
	if len(managers) == 0 {
		return
	}
	for i := range p.cs.Changes {
		c := &p.cs.Changes[i]
		if c.Action == ActionUnmanage || c.Action == ActionDelete || !pairable(c) {
			continue
		}
		k := groupKey{kind: c.Kind, coord: c.Coordinator, prefix: c.StreamPrefix, groupN: c.ConsumerGroup}
		if m, ok := managers[k]; ok && !m.found {
			managers[k] = manager{address: c.Address, found: true}
		}
	}
	for i := range p.cs.Changes {
		c := &p.cs.Changes[i]
		if c.Action != ActionUnmanage || !pairable(c) {
			continue
		}
		if m := managers[groupKey{kind: c.Kind, coord: c.Coordinator, prefix: c.StreamPrefix, groupN: c.ConsumerGroup}]; m.found && m.address != c.Address {
			c.ManagedBy = m.address
		}
	}
}

// moveFrom makes c, an addition, the move of old, a removal of the same identity.
func (c *Change) moveFrom(old *Change) {
	c.MovedFrom = old.Address
	c.ShardsBefore, c.PriorShards = old.ShardsBefore, old.PriorShards
	c.Tainted = c.Tainted || old.Tainted
	c.Missing = mergeFields(old.Missing, c.Missing)
	c.Sensitive = mergeFields(old.Sensitive, c.Sensitive)
	c.Action = ActionScale
	readable := c.InvalidShardCount == "" && !slices.Contains(c.Unknown, FieldShardCount) && !slices.Contains(c.Missing, FieldShardCount)
	if readable && c.ShardsBefore != nil && c.ShardsAfter != nil && *c.ShardsBefore == *c.ShardsAfter {
		c.Action = ActionMove
	}
}

// taintedAddresses lists the instances the prior state marks tainted: their last
// apply failed. Plans of terraform before 1.2 say so only there (later ones also
// give action_reason replace_because_tainted). Malformed parts are passed over:
// they only leave an instance untainted that the plan's own reason still marks.
func taintedAddresses(prior jsontext.Value) map[string]bool {
	if !bytes.Contains(prior, []byte(`"tainted"`)) {
		return nil
	}
	out := map[string]bool{}
	_ = eachMember(prior, func(name []byte, v jsontext.Value) error {
		if string(name) == "values" && v.Kind() == '{' {
			_ = eachMember(v, func(name []byte, v jsontext.Value) error {
				if string(name) == "root_module" && v.Kind() == '{' {
					taintedInModule(v, out)
				}
				return nil
			})
		}
		return nil
	})
	return out
}

func taintedInModule(m jsontext.Value, out map[string]bool) {
	_ = eachMember(m, func(name []byte, v jsontext.Value) error {
		if v.Kind() != '[' {
			return nil
		}
		switch string(name) {
		case "resources":
			_ = eachElement(v, func(res jsontext.Value) error {
				if res.Kind() == '{' {
					taintedResource(res, out)
				}
				return nil
			})
		case "child_modules":
			_ = eachElement(v, func(child jsontext.Value) error {
				if child.Kind() == '{' {
					taintedInModule(child, out)
				}
				return nil
			})
		}
		return nil
	})
}

// taintedResource adds the address of a resource instance of the state marked
// tainted; a deposed object is not the instance the plan replaces.
func taintedResource(res jsontext.Value, out map[string]bool) {
	var address []byte
	var tainted, deposed bool
	_ = eachMember(res, func(name []byte, v jsontext.Value) error {
		switch string(name) {
		case "address":
			if a, err := jsontext.AppendUnquote(nil, v); err == nil && v.Kind() == '"' {
				address = a
			}
		case "tainted":
			tainted = string(v) == "true"
		case "deposed_key":
			deposed = true
		}
		return nil
	})
	if tainted && !deposed && len(address) > 0 {
		out[string(address)] = true
	}
}
