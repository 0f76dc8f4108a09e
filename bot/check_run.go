package bot

import (
	"context"
	"strings"

	"github.com/google/go-github/v60/github"
	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
)

// CheckRun re-plans when someone re-runs one of shardgate's plan checks or its
// aggregate `shardgate` check (above report.max_project_checks the only check a
// pull request has): someone who may comment `/shardgate plan` (write access),
// as for the command. The aggregate check of a merge group's head has no pull
// request and is left alone: the merge queue re-runs a group by re-queuing it.
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
	if ev.GetAction() != "rerequested" || cr.GetApp().GetID() != h.cfg.AppID || !replans(cr.GetName()) {
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
	// A re-run is a `/shardgate plan` by its sender: the same permission.
	gh, err := ghapp.APIFor(h.clients, ref.Installation)
	if err != nil {
		return err
	}
	sender := ev.GetSender().GetLogin()
	if ok, err := hasWriteAccess(ctx, gh, ref, sender); err != nil {
		return err
	} else if !ok {
		logctx.Logger(ctx).WithFields(logrus.Fields{logctx.FieldRepo: ref.FullName(), logctx.FieldPR: ref.Number, "sender": sender}).
			Warn("check run re-run not run: its sender has no write access to the repository (as /shardgate plan needs)")
		return nil
	}
	return h.planner.PlanPR(withPR(ctx, ref), plan.Request{Ref: ref, Explicit: true, Trigger: "check run re-run"})
}

// replans says whether re-running the check named name re-plans its pull request.
func replans(name string) bool {
	return name == prreport.CheckGateName || strings.HasPrefix(name, prreport.CheckPlanPrefix)
}

// prForHead finds the pull request shardgate planned at sha (check_run events
// of pushes to a PR branch may list no pull request).
func (s *Base) prForHead(ctx context.Context, repo *github.Repository, sha string) (int, error) {
	return s.rec.PRWithHead(ctx, repo.GetOwner().GetLogin(), repo.GetName(), sha)
}
