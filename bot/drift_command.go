package bot

import (
	"context"
	"fmt"

	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/policy/report"
)

// driftNow runs `/shardgate drift`: the drift check of every project of the
// repository's default branch, now, and a reply saying where each result is.
// Anyone with write access may run it: it plans the default branch (as a
// scheduled check does) and never applies.
func (h *IssueComment) driftNow(ctx context.Context, gh ghapp.API, ref pullreq.Ref, c *approval.Comment) error {
	r, err := h.driftRecords.Repo(ctx, ref.Owner, ref.Repo)
	if err != nil {
		return err
	}
	if r == nil {
		return h.answer(ctx, gh, ref, c.ID, "confused", fmt.Sprintf("@%s, shardgate does not know this repository's default branch yet; try again.", c.Actor))
	}
	if err := react(ctx, gh, ref, c.ID, "+1"); err != nil {
		return err
	}
	recs, err := h.drift.CheckRepo(ctx, *r)
	if err != nil && len(recs) == 0 {
		return h.comments.Reply(ctx, gh, ref, c.ID,
			fmt.Sprintf("@%s, the drift check could not run:\n\n%s", c.Actor, report.CodeBlock(report.FirstLine(err.Error())))+duplicateNote(ctx))
	}
	if err != nil {
		return err
	}
	return h.comments.Reply(ctx, gh, ref, c.ID, drift.Reply(c.Actor, r.DefaultBranch, recs)+duplicateNote(ctx))
}
