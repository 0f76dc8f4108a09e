package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/shardgate/shardgate/bot/apply"
	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// applyProject answers `/shardgate apply <project>` on a merged pull request:
// it queues the apply of the project's reviewed plan (one that waits for it,
// `apply: manual`), or requeues the project's failed apply. The job goes
// through the same guard as an apply on merge: the merge commit's plan must
// be the reviewed one.
func (h *IssueComment) applyProject(ctx context.Context, gh ghapp.API, ref pullreq.Ref, c *approval.Comment, project string) error {
	if ok, err := h.approverOnly(ctx, gh, ref, c, "apply a project"); !ok || err != nil {
		return err
	}
	text, err := h.queueProject(ctx, gh, ref, project, c.Actor)
	if err != nil {
		return err
	}
	if text != "" {
		return h.answer(ctx, gh, ref, c.ID, "confused", fmt.Sprintf("@%s, %s", c.Actor, text))
	}
	if err := react(ctx, gh, ref, c.ID, "+1"); err != nil {
		return err
	}
	h.scheduler.Notify()
	return h.planner.RefreshComment(ctx, gh, ref, nil)
}

// queueProject queues the project's apply under the pull request's lock (as
// the merge does), or says why it does not.
func (h *IssueComment) queueProject(ctx context.Context, gh ghapp.API, ref pullreq.Ref, project, actor string) (string, error) {
	unlock := h.prLocks.Lock(ref.Key())
	defer unlock()
	pr, err := gh.GetPullRequest(ctx, ref.Owner, ref.Repo, ref.Number)
	if err != nil {
		return "", fmt.Errorf("get pull request %s: %w", ref, err)
	}
	switch {
	case !pr.Merged:
		return "this pull request is not merged: shardgate applies a project after its merge into the default branch; nothing queued.", nil
	case pr.DefaultBranch != "" && pr.BaseRef != pr.DefaultBranch:
		return fmt.Sprintf("this pull request was merged into %s, not the default branch %s: shardgate applies merges into the default branch only.",
			report.Code(pr.BaseRef), report.Code(pr.DefaultBranch)), nil
	}
	plan, err := h.rec.Plan(ctx, ref, pr.HeadSHA, project)
	if err != nil {
		return "", err
	}
	if plan == nil || plan.ChangeSet == nil {
		return fmt.Sprintf("shardgate has no reviewed plan of project %s for the merged head %s; nothing queued.",
			report.Code(project), report.Code(pullreq.ShortSHA(pr.HeadSHA))), nil
	}
	if !apply.ChangesAnything(plan.ChangeSet) {
		return fmt.Sprintf("the reviewed plan of project %s changes nothing; nothing to apply.", report.Code(project)), nil
	}
	jobs, err := h.applies.ListForPR(ctx, ref)
	if err != nil {
		return "", err
	}
	for _, j := range jobs {
		if j.Project != project || j.MergeSHA != pr.MergeSHA {
			continue
		}
		if j.State != applyqueue.Failed {
			return fmt.Sprintf("project %s is already %s; nothing queued.", report.Code(project), applyWord(j.State)), nil
		}
		if _, err := h.applies.Requeue(ctx, j.Seq); err != nil {
			return "", err
		}
		return "", h.applyingStatus(ctx, ref, project, actor)
	}
	ok, err := h.applier.EnqueueApply(ctx, ref, plan, pr, actor)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("project %s is already queued; nothing queued.", report.Code(project)), nil
	}
	return "", h.applyingStatus(ctx, ref, project, actor)
}

// applyingStatus says on the comment's status line which command is being
// applied, until every apply of the pull request has finished.
func (h *IssueComment) applyingStatus(ctx context.Context, ref pullreq.Ref, project, actor string) error {
	st, err := h.rec.PR(ctx, ref)
	if err != nil || st == nil {
		return err
	}
	st.Status = fmt.Sprintf("merged; applying project %s on `/shardgate apply` by %s.", report.Code(project), actor)
	return h.rec.PutPR(ctx, st)
}

func applyWord(st applyqueue.State) string {
	switch st {
	case applyqueue.Applied, applyqueue.Queued:
		return string(st)
	}
	return "being applied (" + string(st) + ")"
}

// approverOnly says whether the comment's author is an approver, and tells
// them on the pull request when they are not.
func (h *IssueComment) approverOnly(ctx context.Context, gh ghapp.API, ref pullreq.Ref, c *approval.Comment, what string) (bool, error) {
	ok, err := h.approvers.IsApprover(ctx, gh, c.Actor)
	if err != nil || ok {
		return ok, err
	}
	return false, h.answer(ctx, gh, ref, c.ID, "-1",
		fmt.Sprintf("@%s, only %s may %s; not done.", c.Actor, strings.TrimPrefix(h.approvers.Text(), "an "), what))
}

// waitingHint names the merged projects that wait for `/shardgate apply
// <project>` (apply: manual) and have no apply job yet: a plain
// `/shardgate apply` retries failed applies only, and must say where to go
// instead of leaving the approver with "nothing to retry".
func (h *IssueComment) waitingHint(ctx context.Context, ref pullreq.Ref, jobs []*applyqueue.Job) (string, error) {
	st, err := h.rec.PR(ctx, ref)
	if err != nil || st == nil {
		return "", err
	}
	var cmds []string
	for _, w := range st.Waiting {
		if !slices.ContainsFunc(jobs, func(j *applyqueue.Job) bool { return j.Project == w.Project }) {
			cmds = append(cmds, report.Code("/shardgate apply "+w.Project))
		}
	}
	if len(cmds) == 0 {
		return "", nil
	}
	return "Waiting for a command: " + strings.Join(cmds, ", ") + ".", nil
}
