package statuspage

import (
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/store/records"
)

func (h *Handler) plans(in []records.RecentPlan) []planView {
	out := make([]planView, 0, len(in))
	for _, p := range in {
		pv := planView{PR: h.prLink(p.Ref), Project: p.Project, Head: h.commitLink(p.Ref, p.HeadSHA), PlannedAt: stamp(p.PlannedAt), Terraform: p.Terraform}
		switch {
		case p.Error != "":
			pv.Outcome, pv.Detail = "error", p.Error
		case p.ChangeSet == nil:
			pv.Outcome = "planning"
		case p.Decision.Allowed:
			pv.Outcome = "allowed"
		default:
			pv.Outcome = "denied"
			var rules []string
			for _, v := range p.Decision.Violations {
				rules = append(rules, fmt.Sprintf("%s (%s/%s): %s", v.Rule, v.StreamPrefix, v.ConsumerGroup, v.Message))
			}
			pv.Detail = strings.Join(rules, "; ")
		}
		for _, w := range p.LockWaits {
			pv.LockWaits = append(pv.LockWaits, fmt.Sprintf("waited %.0fs for the state lock held by %s (lock %s, %s)", w.WaitedSeconds, w.Who, w.ID, w.Operation))
		}
		out = append(out, pv)
	}
	return out
}

func (h *Handler) applies(in []records.Audit) []applyView {
	out := make([]applyView, 0, len(in))
	for _, a := range in {
		out = append(out, applyView{Apply: applyName(a.Seq), PR: h.prLink(a.Ref), Project: a.Project, Outcome: string(a.Outcome),
			Reason: a.Reason, MergeSHA: h.commitLink(a.Ref, a.MergeSHA), MergedBy: a.MergedBy, AppliedBy: a.AppliedBy, RequestIDs: a.RequestIDs,
			Prefix: a.RequestIDPrefix, FinishedAt: stamp(a.FinishedAt)})
	}
	return out
}

func (h *Handler) drift(in []DriftRow) []driftView {
	out := make([]driftView, 0, len(in))
	for _, d := range in {
		dv := driftView{Repo: d.Repo, Project: d.Project, Status: d.Status, Since: stamp(d.Since), CheckedAt: stamp(d.CheckedAt), Issue: h.issueLink(d.IssueURL)}
		for _, g := range d.Groups {
			live := "missing"
			if g.Live != nil {
				live = fmt.Sprintf("%d (%+d)", *g.Live, *g.Live-g.Desired)
			}
			dv.Groups = append(dv.Groups, fmt.Sprintf("%s/%s: desired %d, live %s", g.Prefix, g.Group, g.Desired, live))
		}
		out = append(out, dv)
	}
	return out
}
