package bot

import (
	"context"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/internal/logctx"
)

// Teams drops cached team answers when GitHub reports a membership or a team
// change (the App must subscribe to the membership and team events).
type Teams struct{ *Base }

var _ webhook.EventHandler = (*Teams)(nil)

// Handles implements webhook.EventHandler.
func (h *Teams) Handles() []string { return []string{"membership", "team"} }

// Handle implements webhook.EventHandler.
func (h *Teams) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	log := logctx.Logger(ctx).WithField("event", eventType)
	switch eventType {
	case "membership":
		ev, err := parse[*github.MembershipEvent](eventType, payload)
		if err != nil {
			return err
		}
		h.approvers.ForgetLogin(ev.GetMember().GetLogin())
		log.WithField("action", ev.GetAction()).WithField("team", ev.GetOrg().GetLogin()+"/"+ev.GetTeam().GetSlug()).Info("team membership changed; cached answers dropped")
	default:
		ev, err := parse[*github.TeamEvent](eventType, payload)
		if err != nil {
			return err
		}
		// A team renamed, moved under another parent or deleted changes the
		// answers for all its members: drop them all.
		h.approvers.ForgetAll()
		log.WithField("action", ev.GetAction()).WithField("team", ev.GetOrg().GetLogin()+"/"+ev.GetTeam().GetSlug()).Info("team changed; cached answers dropped")
	}
	return nil
}
