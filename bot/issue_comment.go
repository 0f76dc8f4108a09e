package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/policy"
)

// IssueComment runs /shardgate commands written in pull-request comments.
type IssueComment struct{ *Base }

var _ EventHandler = (*IssueComment)(nil)

// Handles implements EventHandler.
func (h *IssueComment) Handles() []string { return []string{"issue_comment"} }

// Handle implements EventHandler.
func (h *IssueComment) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	ev, err := parse[*github.IssueCommentEvent](eventType, payload)
	if err != nil {
		return err
	}
	if ev.GetAction() != "created" || !ev.GetIssue().IsPullRequest() || ev.GetSender().GetType() == "Bot" {
		return nil
	}
	cmds, perr := ParseCommands(ev.GetComment().GetBody())
	if len(cmds) == 0 && perr == nil {
		return nil
	}
	ref, err := prRef(ev.GetInstallation(), ev.GetRepo(), ev.GetIssue().GetNumber())
	if err != nil {
		return err
	}
	ctx = withPR(ctx, ref)
	gh, err := h.s.clients.NewInstallationClient(ref.Installation)
	if err != nil {
		return err
	}
	actor := ev.GetSender().GetLogin()
	commentID := ev.GetComment().GetID()
	var ce *CommandError
	if errors.As(perr, &ce) {
		return h.answer(ctx, gh, ref, commentID, "confused", fmt.Sprintf("@%s, %s.\n\n%s", actor, ce.Reason, HelpText))
	}
	canWrite, err := hasWriteAccess(ctx, gh, ref, actor)
	if err != nil {
		return err
	}
	if !canWrite {
		return h.answer(ctx, gh, ref, commentID, "-1",
			fmt.Sprintf("@%s, shardgate commands need write access to %s; yours was not run.", actor, ref.FullName()))
	}
	for _, cmd := range cmds {
		if err := h.run(ctx, gh, ref, commentID, actor, cmd); err != nil {
			return err
		}
	}
	return nil
}

func (h *IssueComment) run(ctx context.Context, gh *github.Client, ref PRRef, commentID int64, actor string, cmd Command) error {
	switch cmd.Verb {
	case CmdHelp:
		return h.answer(ctx, gh, ref, commentID, "+1", HelpText)
	case CmdPlan:
		if err := react(ctx, gh, ref, commentID, "+1"); err != nil {
			return err
		}
		return h.s.planPR(ctx, planRequest{ref: ref, explicit: true, trigger: "/shardgate plan by @" + actor})
	case CmdAttest:
		return h.attest(ctx, gh, ref, commentID, actor, cmd.StreamPrefix)
	case CmdApply:
		return h.retryApply(ctx, gh, ref, commentID, actor)
	}
	return nil
}

// attest records a producer-quiesce attestation for the current head commit.
func (h *IssueComment) attest(ctx context.Context, gh *github.Client, ref PRRef, commentID int64, actor, prefix string) error {
	ok, err := h.s.isApprover(ctx, gh, actor)
	if err != nil {
		return err
	}
	if !ok {
		return h.answer(ctx, gh, ref, commentID, "-1",
			fmt.Sprintf("@%s, only %s may attest that producers are quiesced; not recorded.", actor, strings.TrimPrefix(h.s.approversText(), "an ")))
	}
	pr, _, err := gh.PullRequests.Get(ctx, ref.Owner, ref.Repo, ref.Number)
	if err != nil {
		return fmt.Errorf("get pull request %s: %w", ref, err)
	}
	now := h.s.now().UTC()
	a := policy.Attestation{StreamPrefix: prefix, Actor: actor, HeadSHA: pr.GetHead().GetSHA(), CreatedAt: now, ExpiresAt: now.Add(h.s.cfg.AttestationTTL)}
	if err := h.s.rec.putAttestation(ctx, ref, a); err != nil {
		return err
	}
	if err := react(ctx, gh, ref, commentID, "+1"); err != nil {
		return err
	}
	return h.s.reevaluate(ctx, ref)
}

// retryApply puts this pull request's failed applies back in the queue (at its
// end, behind everything merged since): they re-plan, pass the guard and apply.
func (h *IssueComment) retryApply(ctx context.Context, gh *github.Client, ref PRRef, commentID int64, actor string) error {
	ok, err := h.s.isApprover(ctx, gh, actor)
	if err != nil {
		return err
	}
	if !ok {
		return h.answer(ctx, gh, ref, commentID, "-1",
			fmt.Sprintf("@%s, only %s may retry an apply; not retried.", actor, strings.TrimPrefix(h.s.approversText(), "an ")))
	}
	jobs, err := h.s.applies.ListForPR(ctx, ref)
	if err != nil {
		return err
	}
	retried := 0
	for _, j := range jobs {
		if j.State != ApplyFailed {
			continue
		}
		if _, err := h.s.applies.Requeue(ctx, j.Seq); err != nil {
			return err
		}
		retried++
	}
	if retried == 0 {
		return h.answer(ctx, gh, ref, commentID, "confused", fmt.Sprintf("@%s, this pull request has no failed apply to retry.", actor))
	}
	if err := react(ctx, gh, ref, commentID, "+1"); err != nil {
		return err
	}
	h.s.scheduler.Notify()
	return h.s.refreshComment(ctx, gh, ref)
}

// answer acknowledges a command with a reaction and replies with text.
func (h *IssueComment) answer(ctx context.Context, gh *github.Client, ref PRRef, commentID int64, reaction, text string) error {
	if err := react(ctx, gh, ref, commentID, reaction); err != nil {
		return err
	}
	return h.s.reply(ctx, gh, ref, commentID, text)
}

func react(ctx context.Context, gh *github.Client, ref PRRef, commentID int64, reaction string) error {
	if _, _, err := gh.Reactions.CreateIssueCommentReaction(ctx, ref.Owner, ref.Repo, commentID, reaction); err != nil {
		return fmt.Errorf("react to comment %d on %s: %w", commentID, ref, err)
	}
	return nil
}

// hasWriteAccess says whether login may push to the repository.
func hasWriteAccess(ctx context.Context, gh *github.Client, ref PRRef, login string) (bool, error) {
	p, _, err := gh.Repositories.GetPermissionLevel(ctx, ref.Owner, ref.Repo, login)
	if err != nil {
		return false, fmt.Errorf("read the permission of @%s on %s: %w", login, ref.FullName(), err)
	}
	switch p.GetPermission() {
	case "admin", "maintain", "write":
		return true, nil
	}
	return false, nil
}
