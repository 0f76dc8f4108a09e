package bot

import (
	"context"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/internal/logctx"
)

// Installation follows the App being installed on, or removed from, accounts
// and repositories; any number of installations is served.
type Installation struct{ *Base }

var _ webhook.EventHandler = (*Installation)(nil)

// Handles implements webhook.EventHandler.
func (h *Installation) Handles() []string {
	return []string{"installation", "installation_repositories"}
}

// forgetter is a ClientCreator that can drop an installation's cached client.
type forgetter interface{ Forget(installationID int64) }

// Handle implements webhook.EventHandler.
func (h *Installation) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var inst *github.Installation
	var action string
	var removed []*github.Repository
	switch eventType {
	case "installation":
		ev, err := parse[*github.InstallationEvent](eventType, payload)
		if err != nil {
			return err
		}
		inst, action = ev.GetInstallation(), ev.GetAction()
	default:
		ev, err := parse[*github.InstallationRepositoriesEvent](eventType, payload)
		if err != nil {
			return err
		}
		inst, action, removed = ev.GetInstallation(), ev.GetAction(), ev.RepositoriesRemoved
	}
	if err := h.drift.forget(ctx, inst, action, removed); err != nil {
		return err
	}
	log := logctx.Logger(ctx).WithField(logctx.FieldInstallation, inst.GetID()).WithField("account", inst.GetAccount().GetLogin())
	if action == "deleted" || action == "suspend" {
		if f, ok := h.clients.(forgetter); ok {
			f.Forget(inst.GetID())
		}
	}
	log.WithField("action", action).Info("installation changed")
	return nil
}
