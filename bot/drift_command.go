package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/approval"
	"github.com/shardgate/shardgate/drift"
	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/pullreq"
	"github.com/shardgate/shardgate/report"
)

// driftNow runs `/shardgate drift`: the drift check of every project of the
// repository's default branch, now, and a reply saying where each result is.
// Anyone with write access may run it: it plans the default branch (as a
// scheduled check does) and never applies.
func (h *IssueComment) driftNow(ctx context.Context, gh ghapp.API, ref pullreq.Ref, c *approval.Comment) error {
	r, err := h.s.drift.store.Repo(ctx, ref.Owner, ref.Repo)
	if err != nil {
		return err
	}
	if r == nil {
		return h.answer(ctx, gh, ref, c.ID, "confused", fmt.Sprintf("@%s, shardgate does not know this repository's default branch yet; try again.", c.Actor))
	}
	if err := react(ctx, gh, ref, c.ID, "+1"); err != nil {
		return err
	}
	recs, err := h.s.drift.CheckRepo(ctx, *r)
	if err != nil && len(recs) == 0 {
		return h.s.planner.comments.Reply(ctx, gh, ref, c.ID,
			fmt.Sprintf("@%s, the drift check could not run:\n\n%s", c.Actor, report.CodeBlock(report.FirstLine(err.Error()))))
	}
	if err != nil {
		return err
	}
	return h.s.planner.comments.Reply(ctx, gh, ref, c.ID, driftReply(c.Actor, r.DefaultBranch, recs))
}

// driftReply says, per project, what the drift check found and where.
func driftReply(actor, branch string, recs []*drift.Record) string {
	if len(recs) == 0 {
		return fmt.Sprintf("@%s, the `.shardgate.yaml` of %s lists no projects: there is nothing to check for drift.", actor, report.Code(branch))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@%s, drift check of %s at %s:\n\n", actor, report.Code(branch), report.Code(pullreq.ShortSHA(recs[0].Commit)))
	for _, rec := range recs {
		where := ""
		if rec.Issue > 0 {
			where = fmt.Sprintf(" — see #%d", rec.Issue)
		}
		switch rec.Status {
		case drift.StatusDrifted:
			fmt.Fprintf(&b, "- project %s: **drift**, %d group(s) differ from the code, %d change(s) pending%s\n", report.Code(rec.Project), len(rec.Groups), rec.Pending, where)
		case drift.StatusError:
			fmt.Fprintf(&b, "- project %s: the check failed (not drift)%s\n", report.Code(rec.Project), where)
		default:
			fmt.Fprintf(&b, "- project %s: no drift\n", report.Code(rec.Project))
		}
	}
	return b.String()
}
