package bot

import "github.com/shardgate/shardgate/serverconfig"

// Aliases kept while the intake, dispatcher and apply-queue files move out of
// bot (issue 12); they go once those files use the new packages themselves.

// Secret is serverconfig.Secret.
type Secret = serverconfig.Secret

// NewSecret is serverconfig.NewSecret.
func NewSecret(v string) Secret { return serverconfig.NewSecret(v) }

// DefaultMaxWebhookBytes is serverconfig.DefaultMaxWebhookBytes.
const DefaultMaxWebhookBytes = serverconfig.DefaultMaxWebhookBytes
