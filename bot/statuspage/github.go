package statuspage

import (
	"fmt"
	"sort"
	"time"
)

// GitHubBudget is what GitHub last said about one installation's rate
// limits (ghapp.Budgets), as the page shows it.
type GitHubBudget struct {
	InstallationID   int64
	Limit, Remaining int
	Reset            time.Time
	// SecondaryUntil is when a secondary limit's Retry-After ends.
	SecondaryUntil time.Time
}

type budgetView struct {
	Installation int64
	Remaining    string
	Reset        string
	// Waiting says which limit holds the installation's jobs now, if one does.
	Waiting string
}

// budgets shows the installations in id order, saying which wait on a limit.
func (h *Handler) budgets(bs []GitHubBudget) []budgetView {
	now := h.o.Now()
	bs = append([]GitHubBudget(nil), bs...)
	sort.Slice(bs, func(i, j int) bool { return bs[i].InstallationID < bs[j].InstallationID })
	var out []budgetView
	for _, b := range bs {
		v := budgetView{Installation: b.InstallationID, Remaining: "not heard yet"}
		if b.Limit > 0 {
			v.Remaining, v.Reset = fmt.Sprintf("%d of %d", b.Remaining, b.Limit), stamp(b.Reset)
			if b.Remaining == 0 && b.Reset.After(now) {
				v.Waiting = "waiting for GitHub's rate limit, resets at " + stamp(b.Reset)
			}
		}
		if b.SecondaryUntil.After(now) {
			v.Waiting = "waiting for GitHub's secondary rate limit until " + stamp(b.SecondaryUntil)
		}
		out = append(out, v)
	}
	return out
}
