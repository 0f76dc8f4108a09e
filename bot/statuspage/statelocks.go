package statuspage

import (
	"slices"
	"strings"

	"github.com/shardgate/shardgate/store/applyqueue"
)

// stateDepthView is one Terraform state's lock on the overview: how many
// unfinished applies queue on it, how many of them run (hold it) and how
// many wait.
type stateDepthView struct {
	State            string
	Depth            int
	Running, Waiting int
}

// stateDepths counts the live applies by the Terraform state each locks,
// deepest first, then by state.
func stateDepths(live []*applyqueue.Job) []stateDepthView {
	by := map[string]*stateDepthView{}
	for _, j := range live {
		if j.StateKey == "" || j.State.Finished() {
			continue
		}
		d := by[j.StateKey]
		if d == nil {
			d = &stateDepthView{State: j.StateKey}
			by[j.StateKey] = d
		}
		d.Depth++
		if j.State == applyqueue.Queued {
			d.Waiting++
		} else {
			d.Running++
		}
	}
	out := make([]stateDepthView, 0, len(by))
	for _, d := range by {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b stateDepthView) int {
		if a.Depth != b.Depth {
			return b.Depth - a.Depth
		}
		return strings.Compare(a.State, b.State)
	})
	return out
}
