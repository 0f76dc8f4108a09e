package planparse

import (
	"slices"
	"sort"
)

// SensitiveValues lists the values of every identity field the plan marks
// sensitive (Change.Sensitive), each once, longest first: what a report must
// replace by "(sensitive)" wherever it would show it. A coordinator URL marked
// sensitive is listed as written and normalized.
func (cs *ChangeSet) SensitiveValues() []string {
	if cs == nil {
		return nil
	}
	return SensitiveValues(cs.Changes)
}

// SensitiveValues is ChangeSet.SensitiveValues of a list of changes (a
// decision's judged changes).
func SensitiveValues(changes []Change) []string {
	var out []string
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for i := range changes {
		c := &changes[i]
		for _, f := range c.Sensitive {
			switch f {
			case FieldStreamPrefix:
				add(c.StreamPrefix)
			case FieldConsumerGroup:
				add(c.ConsumerGroup)
			case FieldCoordinatorURL:
				add(c.CoordinatorURL)
				add(c.Coordinator)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}
