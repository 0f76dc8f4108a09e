package bot

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/shardgate/shardgate/serverconfig"
	"github.com/shardgate/shardgate/webhook"

	"github.com/shardgate/shardgate/redact"
)

// NewRedactor builds the redactor of every Secret in cfg (Config.SecretValues).
func NewRedactor(cfg *serverconfig.Config) *redact.Redactor {
	return redact.New(cfg.SecretValues()...)
}

// redactingHandler gives the dispatcher only redacted errors: they are
// stored as the job's last error, logged, and shown on the pull request when
// the job fails for good. A panic becomes such an error too (its value may
// quote what a pull request wrote).
type redactingHandler struct {
	webhook.EventHandler
	r *redact.Redactor
}

// Handle implements webhook.EventHandler.
func (h redactingHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v\n%s", p, debug.Stack())
		}
		err = h.r.Error(err)
	}()
	return h.EventHandler.Handle(ctx, eventType, deliveryID, payload)
}
