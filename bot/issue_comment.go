package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"
	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/prcommand"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// IssueComment runs /shardgate commands written in pull-request comments.
type IssueComment struct{ *Base }

var _ webhook.EventHandler = (*IssueComment)(nil)

// Handles implements webhook.EventHandler.
func (h *IssueComment) Handles() []string { return []string{"issue_comment"} }

// Handle implements webhook.EventHandler. The comment is read back from GitHub: its
// body, author and times are GitHub's, not the delivery's, and each version of
// it (id and last edit) runs its commands once, however often it is delivered.
func (h *IssueComment) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	ev, err := parse[*github.IssueCommentEvent](eventType, payload)
	if err != nil {
		return err
	}
	// An edit by anyone but the comment's author (GitHub lets everyone with
	// write access edit any comment; a workflow's token edits as a bot) is
	// never the author's word.
	foreign := ev.GetAction() == "edited" && !strings.EqualFold(ev.GetSender().GetLogin(), ev.GetComment().GetUser().GetLogin())
	switch {
	case ev.GetAction() != "created" && ev.GetAction() != "edited", !ev.GetIssue().IsPullRequest():
		return nil
	case foreign:
	case ev.GetSender().GetType() == "Bot":
		return nil
	case !strings.Contains(ev.GetComment().GetBody(), prcommand.Prefix):
		return nil // no command in it; spares GitHub a call per comment
	}
	ref, err := prRef(ev.GetInstallation(), ev.GetRepo(), ev.GetIssue().GetNumber())
	if err != nil {
		return err
	}
	ctx = withPR(ctx, ref)
	h.drift.sawRepo(ctx, ev.GetInstallation(), ev.GetRepo())
	gh, err := ghapp.APIFor(h.clients, ref.Installation)
	if err != nil {
		return err
	}
	if foreign {
		return h.foreignEdit(ctx, gh, ref, ev)
	}
	c, err := approval.ReadComment(ctx, gh, ref, ev.GetComment().GetID())
	dups := duplicateComments(ctx)
	for err == nil && c == nil && len(dups) > 0 {
		// The comment is gone; the first of its duplicates still there
		// is answered in its place, for the others.
		c, err = approval.ReadComment(ctx, gh, ref, dups[0].ID)
		dups = dups[1:]
	}
	if err != nil || c == nil {
		return err
	}
	if c.ID == ev.GetComment().GetID() && c.Body != ev.GetComment().GetBody() {
		// Changed since this event, by whom GitHub does not say here: the
		// later version's own event decides, by its sender.
		logctx.Logger(ctx).WithField("comment_id", c.ID).Info("the comment changed after this event; its commands are not run (the edit's event decides)")
		return nil
	}
	key := records.CommandKey(ref, c.ID, c.MadeAt)
	if done, err := h.rec.Handled(ctx, key); err != nil || done {
		return err
	}
	ctx = withDuplicates(ctx, dups)
	if err := h.runAll(ctx, gh, ref, c); err != nil {
		return err
	}
	if note := duplicateNote(ctx); note != "" {
		// The command made no reply of its own (a plan): the comments
		// coalesced into it are named in one.
		if err := h.comments.Reply(ctx, gh, ref, c.ID, fmt.Sprintf("@%s, done.%s", c.Actor, note)); err != nil {
			return err
		}
	}
	return h.rec.MarkHandled(ctx, key, h.now())
}

// runAll runs the commands of one comment, or says why they do not run.
func (h *IssueComment) runAll(ctx context.Context, gh ghapp.API, ref pullreq.Ref, c *approval.Comment) error {
	cmds, perr := prcommand.Parse(c.Body)
	if len(cmds) == 0 && perr == nil {
		return nil
	}
	var ce *prcommand.CommandError
	if errors.As(perr, &ce) {
		return h.answer(ctx, gh, ref, c.ID, "confused", fmt.Sprintf("@%s, %s.\n\n%s", c.Actor, ce.Reason, prcommand.HelpText))
	}
	canWrite, err := hasWriteAccess(ctx, gh, ref, c.Actor)
	if err != nil {
		return err
	}
	if !canWrite {
		return h.answer(ctx, gh, ref, c.ID, "-1",
			fmt.Sprintf("@%s, shardgate commands need write access to %s; yours was not run.", c.Actor, ref.FullName()))
	}
	for _, cmd := range cmds {
		if err := h.run(ctx, gh, ref, c, cmd); err != nil {
			return err
		}
	}
	return nil
}

func (h *IssueComment) run(ctx context.Context, gh ghapp.API, ref pullreq.Ref, c *approval.Comment, cmd prcommand.Command) error {
	switch cmd.Verb {
	case prcommand.CmdHelp:
		return h.answer(ctx, gh, ref, c.ID, "+1", prcommand.HelpText)
	case prcommand.CmdPlan:
		if err := react(ctx, gh, ref, c.ID, "+1"); err != nil {
			return err
		}
		return h.planner.PlanPR(ctx, plan.Request{Ref: ref, Explicit: true, Trigger: "/shardgate plan by " + c.Actor})
	case prcommand.CmdDrift:
		return h.driftNow(ctx, gh, ref, c)
	case prcommand.CmdCancel:
		return h.cancelPlans(ctx, gh, ref, c)
	}
	switch cmd.Verb {
	case prcommand.CmdAttest:
		return h.attest(ctx, gh, ref, c, cmd.StreamPrefix)
	case prcommand.CmdApply:
		if cmd.Project != "" {
			return h.applyProject(ctx, gh, ref, c, cmd.Project)
		}
		return h.retryApply(ctx, gh, ref, c.ID, c.Actor)
	}
	return nil
}

// attest records a producer-quiesce attestation for the head commit that was
// current when the comment was made (see records.PRState.headAt), valid for the
// attestation TTL from then: a push between the comment and its processing,
// or a replay of it, gets nothing.
func (h *IssueComment) attest(ctx context.Context, gh ghapp.API, ref pullreq.Ref, c *approval.Comment, prefix string) error {
	ok, err := h.approvers.IsApprover(ctx, gh, c.Actor)
	if err != nil {
		return err
	}
	if !ok {
		return h.answer(ctx, gh, ref, c.ID, "-1",
			fmt.Sprintf("@%s, only %s may attest that producers are quiesced; not recorded.", c.Actor, strings.TrimPrefix(h.approvers.Text(), "an ")))
	}
	head, current, err := h.planner.HeadWhen(ctx, gh, ref, c.MadeAt)
	if err != nil {
		return err
	}
	if head == "" {
		return h.answer(ctx, gh, ref, c.ID, "confused", fmt.Sprintf("@%s, your comment is older than every head commit of this pull request shardgate has seen, "+
			"so it cannot tell which commit you attested; not recorded. Attest again for `%s`.", c.Actor, pullreq.ShortSHA(current)))
	}
	a := policy.Attestation{StreamPrefix: prefix, Actor: c.Actor, HeadSHA: head, CreatedAt: c.MadeAt, ExpiresAt: c.MadeAt.Add(h.cfg.AttestationTTL),
		CommentID: c.ID}
	if err := h.rec.PutAttestation(ctx, ref, a); err != nil {
		return err
	}
	if head != current {
		// Nothing changes for the current head: no need to judge it again.
		return h.answer(ctx, gh, ref, c.ID, "confused", fmt.Sprintf("@%s, your attestation for `%s` is recorded for `%s`, the head when you commented. "+
			"The head is now `%s`: it does not count for that commit; attest again once you have checked it.", c.Actor, prefix, pullreq.ShortSHA(head), pullreq.ShortSHA(current)))
	}
	if err := react(ctx, gh, ref, c.ID, "+1"); err != nil {
		return err
	}
	return h.planner.Reevaluate(ctx, ref)
}

// foreignEdit handles an edit of a comment by someone other than its
// author: the comment no longer says only what its author wrote, so what it
// granted (its attestations) is revoked, whenever the edit came and whether
// or not the comment is still there, and the edit grants nothing. The PR is
// told when it revoked something or the comment held a command, before or
// after the edit (Reply posts each answer once).
func (h *IssueComment) foreignEdit(ctx context.Context, gh ghapp.API, ref pullreq.Ref, ev *github.IssueCommentEvent) error {
	id, author, editor := ev.GetComment().GetID(), ev.GetComment().GetUser().GetLogin(), ev.GetSender().GetLogin()
	revoked, err := h.rec.RevokeCommentAttestations(ctx, ref, id)
	if err != nil {
		return err
	}
	logctx.Logger(ctx).WithFields(logrus.Fields{"comment_id": id, "author": author, "editor": editor, "revoked": len(revoked)}).
		Warn("a comment was edited by someone other than its author: its commands are not run, its attestations are revoked")
	before := ev.GetChanges().GetBody().GetFrom()
	if len(revoked) == 0 && !strings.Contains(ev.GetComment().GetBody(), prcommand.Prefix) && !strings.Contains(before, prcommand.Prefix) {
		return nil
	}
	text := fmt.Sprintf("@%s, @%s edited this comment of @%s: shardgate takes a command only as its author wrote it, so the edit is not run and grants nothing.",
		author, editor, author)
	if len(revoked) > 0 {
		var streams []string
		for _, a := range revoked {
			streams = append(streams, "`"+a.StreamPrefix+"`")
		}
		text += fmt.Sprintf(" The attestation it gave (%s) is revoked; if it still holds, attest again in a new comment.", strings.Join(streams, ", "))
	}
	if c, err := approval.ReadComment(ctx, gh, ref, id); err != nil {
		return err
	} else if c != nil {
		if err := react(ctx, gh, ref, id, "confused"); err != nil {
			return err
		}
	}
	if err := h.comments.Reply(ctx, gh, ref, id, text); err != nil {
		return err
	}
	if len(revoked) > 0 {
		return h.planner.Reevaluate(ctx, ref)
	}
	return nil
}

// retryApply puts this pull request's failed applies back in the queue (at its
// end, behind everything merged since): they re-plan, pass the guard and apply.
func (h *IssueComment) retryApply(ctx context.Context, gh ghapp.API, ref pullreq.Ref, commentID int64, actor string) error {
	ok, err := h.approvers.IsApprover(ctx, gh, actor)
	if err != nil {
		return err
	}
	if !ok {
		return h.answer(ctx, gh, ref, commentID, "-1",
			fmt.Sprintf("@%s, only %s may retry an apply; not retried.", actor, strings.TrimPrefix(h.approvers.Text(), "an ")))
	}
	jobs, err := h.applies.ListForPR(ctx, ref)
	if err != nil {
		return err
	}
	retried := 0
	for _, j := range jobs {
		if j.State != applyqueue.Failed {
			continue
		}
		if _, err := h.applies.Requeue(ctx, j.Seq); err != nil {
			return err
		}
		retried++
	}
	if retried == 0 {
		text := fmt.Sprintf("@%s, this pull request has no failed apply to retry.", actor)
		if hint, err := h.waitingHint(ctx, ref, jobs); err != nil {
			return err
		} else if hint != "" {
			text += " " + hint
		}
		return h.answer(ctx, gh, ref, commentID, "confused", text)
	}
	if err := react(ctx, gh, ref, commentID, "+1"); err != nil {
		return err
	}
	h.scheduler.Notify()
	return h.planner.RefreshComment(ctx, gh, ref, nil)
}

// answer acknowledges a command with a reaction and replies with text.
func (h *IssueComment) answer(ctx context.Context, gh ghapp.API, ref pullreq.Ref, commentID int64, reaction, text string) error {
	if err := react(ctx, gh, ref, commentID, reaction); err != nil {
		return err
	}
	return h.comments.Reply(ctx, gh, ref, commentID, text+duplicateNote(ctx))
}

func react(ctx context.Context, gh ghapp.API, ref pullreq.Ref, commentID int64, reaction string) error {
	if err := gh.ReactToComment(ctx, ref.Owner, ref.Repo, commentID, reaction); err != nil {
		return fmt.Errorf("react to comment %d on %s: %w", commentID, ref, err)
	}
	return nil
}

// hasWriteAccess says whether login may push to the repository.
func hasWriteAccess(ctx context.Context, gh ghapp.API, ref pullreq.Ref, login string) (bool, error) {
	p, err := gh.PermissionLevel(ctx, ref.Owner, ref.Repo, login)
	if err != nil {
		return false, fmt.Errorf("read the permission of @%s on %s: %w", login, ref.FullName(), err)
	}
	switch p {
	case "admin", "maintain", "write":
		return true, nil
	}
	return false, nil
}
