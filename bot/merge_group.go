package bot

import (
	"context"
	"encoding/json"

	"github.com/google/go-github/v60/github"
	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
)

// MergeGroup judges the commits GitHub's merge queue will land: a group's
// head is planned and judged on checks_requested (a preview: it never
// applies), and its plan is stopped and its checks cancelled on destroyed.
type MergeGroup struct{ *Base }

var _ webhook.EventHandler = (*MergeGroup)(nil)

// Handles implements webhook.EventHandler.
func (h *MergeGroup) Handles() []string { return []string{"merge_group"} }

// Handle implements webhook.EventHandler.
func (h *MergeGroup) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	ev, g, err := groupOf(eventType, payload)
	if err != nil {
		return err
	}
	ctx = logctx.WithLogger(ctx, logctx.Logger(ctx).WithFields(logrus.Fields{logctx.FieldInstallation: g.Installation,
		logctx.FieldRepo: g.Owner + "/" + g.Repo, logctx.FieldSHA: g.HeadSHA}))
	h.drift.sawRepo(ctx, ev.GetInstallation(), ev.GetRepo())
	switch ev.GetAction() {
	case "checks_requested":
		return h.planner.PlanGroup(ctx, g)
	case "destroyed":
		// go-github's type has no reason (merged, invalidated, dequeued).
		var p struct {
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal(payload, &p)
		return h.planner.DestroyGroup(ctx, g, p.Reason)
	}
	return nil
}

// groupOf reads a merge_group event and the group it names.
func groupOf(eventType string, payload []byte) (*github.MergeGroupEvent, plan.Group, error) {
	ev, err := parse[*github.MergeGroupEvent](eventType, payload)
	if err != nil {
		return nil, plan.Group{}, err
	}
	if ev.GetInstallation().GetID() == 0 {
		return nil, plan.Group{}, errNoInstallation
	}
	mg := ev.GetMergeGroup()
	return ev, plan.Group{Installation: ev.GetInstallation().GetID(), Owner: ev.GetRepo().GetOwner().GetLogin(), Repo: ev.GetRepo().GetName(),
		HeadSHA: mg.GetHeadSHA(), HeadRef: mg.GetHeadRef(), BaseSHA: mg.GetBaseSHA(), BaseRef: mg.GetBaseRef(),
		DefaultBranch: ev.GetRepo().GetDefaultBranch()}, nil
}

// reportGroupFailure fails the checks a merge group's job left in progress
// when it failed for good: the queue does not wait on them.
func (s *Server) reportGroupFailure(ctx context.Context, job *store.Job, jobErr error) {
	_, g, err := groupOf(job.Event, job.Payload)
	if err == nil {
		err = s.planner.FailGroup(ctx, g, jobErr.Error())
	}
	if err != nil {
		logctx.Logger(ctx).WithError(err).Error("report a failed merge group job on its checks")
	}
}
