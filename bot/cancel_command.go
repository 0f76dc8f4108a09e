package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// cancelPlans answers `/shardgate cancel` by the pull request's author or an
// approver: the pull request's plans queued before the comment do not run,
// and those running stop (terraform gets SIGINT, so it releases the state
// lock itself, and is killed after the runner's grace period); their check
// runs conclude cancelled, and the comment says who cancelled. Applies are
// never cancelled this way: the reply says so when one is queued or running.
//
// The comment's job runs outside the pull request's lane (identify), so it
// is not queued behind the plan it cancels.
func (h *IssueComment) cancelPlans(ctx context.Context, gh ghapp.API, ref pullreq.Ref, c *approval.Comment) error {
	pr, err := gh.GetPullRequest(ctx, ref.Owner, ref.Repo, ref.Number)
	if err != nil {
		return fmt.Errorf("get pull request %s: %w", ref, err)
	}
	if !strings.EqualFold(pr.Author, c.Actor) {
		ok, err := h.approvers.IsApprover(ctx, gh, c.Actor)
		if err != nil {
			return err
		}
		if !ok {
			return h.answer(ctx, gh, ref, c.ID, "-1", fmt.Sprintf("@%s, only the pull request's author (@%s) or %s may cancel its plans; nothing was cancelled.",
				c.Actor, pr.Author, strings.TrimPrefix(h.approvers.Text(), "an ")))
		}
	}
	stopped, err := h.planner.CancelPlans(ctx, ref, "@"+c.Actor)
	if err != nil {
		return err
	}
	text := fmt.Sprintf("@%s, cancelled: this pull request's plans queued before your comment will not run", c.Actor)
	if stopped > 0 {
		text += fmt.Sprintf(", and %s stopped (terraform interrupted; its check runs conclude cancelled)", plural(stopped, "running plan"))
	}
	text += ". Comment `/shardgate plan` to plan again."
	jobs, err := h.applies.ListForPR(ctx, ref)
	if err != nil {
		return err
	}
	if applying := activeApplies(jobs); applying > 0 {
		what := "An apply of this pull request is queued or running; it goes on"
		if applying > 1 {
			what = fmt.Sprintf("%d applies of this pull request are queued or running; they go on", applying)
		}
		text += "\n\n" + what + ": applies are not cancelled by `/shardgate cancel`."
	}
	return h.answer(ctx, gh, ref, c.ID, "+1", text)
}

// activeApplies counts the applies that are queued or under way.
func activeApplies(jobs []*applyqueue.Job) int {
	n := 0
	for _, j := range jobs {
		if j.State != applyqueue.Applied && j.State != applyqueue.Failed {
			n++
		}
	}
	return n
}
