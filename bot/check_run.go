package bot

import (
	"context"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/webhook"
)

// CheckRun re-plans when someone re-runs one of shardgate's plan checks.
type CheckRun struct{ *Base }

var _ webhook.EventHandler = (*CheckRun)(nil)

// Handles implements webhook.EventHandler.
func (h *CheckRun) Handles() []string { return []string{"check_run"} }

// Handle implements webhook.EventHandler.
func (h *CheckRun) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	ev, err := parse[*github.CheckRunEvent](eventType, payload)
	if err != nil {
		return err
	}
	cr := ev.GetCheckRun()
	if ev.GetAction() != "rerequested" || cr.GetApp().GetID() != h.cfg.AppID || !strings.HasPrefix(cr.GetName(), "shardgate/plan") {
		return nil
	}
	number := 0
	if prs := cr.PullRequests; len(prs) > 0 {
		number = prs[0].GetNumber()
	} else if number, err = h.prForHead(ctx, ev.GetRepo(), cr.GetHeadSHA()); err != nil || number == 0 {
		return err
	}
	ref, err := prRef(ev.GetInstallation(), ev.GetRepo(), number)
	if err != nil {
		return err
	}
	return h.planner.PlanPR(withPR(ctx, ref), plan.Request{Ref: ref, Explicit: true, Trigger: "check run re-run"})
}

// prForHead finds the pull request shardgate planned at sha (check_run events
// of pushes to a PR branch may list no pull request).
func (s *Base) prForHead(ctx context.Context, repo *github.Repository, sha string) (int, error) {
	return s.rec.PRWithHead(ctx, repo.GetOwner().GetLogin(), repo.GetName(), sha)
}
