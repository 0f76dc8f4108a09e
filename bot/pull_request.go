package bot

import (
	"context"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store/records"
)

// PullRequest plans on pushes and re-judges on exception labels.
type PullRequest struct{ *Base }

var _ webhook.EventHandler = (*PullRequest)(nil)

// Handles implements webhook.EventHandler.
func (h *PullRequest) Handles() []string { return []string{"pull_request"} }

// Handle implements webhook.EventHandler.
func (h *PullRequest) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	ev, err := parse[*github.PullRequestEvent](eventType, payload)
	if err != nil {
		return err
	}
	ref, err := prRef(ev.GetInstallation(), ev.GetRepo(), ev.GetNumber())
	if err != nil {
		return err
	}
	ctx = withPR(ctx, ref)
	h.drift.sawRepo(ctx, ev.GetInstallation(), ev.GetRepo())
	switch ev.GetAction() {
	case "opened", "reopened", "synchronize":
		return h.planner.PlanPR(ctx, plan.Request{Ref: ref, Trigger: ev.GetAction(), Event: plan.EventOf(ev)})
	case "ready_for_review":
		return h.planner.PlanPR(ctx, plan.Request{Ref: ref, Explicit: true, Trigger: ev.GetAction(), Event: plan.EventOf(ev)})
	case "labeled", "unlabeled":
		return h.label(ctx, ref, ev)
	case "closed":
		return h.closed(ctx, ref, ghapp.PullRequestOf(ev.GetPullRequest()))
	}
	return nil
}

// label judges the PR again when an exception label changed. Who added it, and
// when, come from GitHub's issue events, never from the delivery (whose sender
// a forged delivery can name at will); each labeled event is judged once.
func (h *PullRequest) label(ctx context.Context, ref pullreq.Ref, ev *github.PullRequestEvent) error {
	name := ev.GetLabel().GetName()
	if !strings.HasPrefix(name, policy.ExceptionLabelPrefix) {
		return nil
	}
	if ev.GetAction() == "unlabeled" {
		if err := h.rec.DeleteLabel(ctx, ref, name); err != nil {
			return err
		}
		return h.planner.Reevaluate(ctx, ref)
	}
	gh, err := ghapp.APIFor(h.clients, ref.Installation)
	if err != nil {
		return err
	}
	events, err := approval.LatestLabelEvents(ctx, gh, ref, []string{name})
	if err != nil {
		return err
	}
	e := events[name]
	if e == nil {
		logctx.Logger(ctx).WithField("label", name).Warn("labeled delivery without a labeled issue event; not judged")
		return nil
	}
	key := records.LabelEventKey(ref, e.ID)
	if done, err := h.rec.Handled(ctx, key); err != nil || done {
		return err
	}
	if err := h.planner.Reevaluate(ctx, ref); err != nil {
		return err
	}
	return h.rec.MarkHandled(ctx, key, h.now())
}
