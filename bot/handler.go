// Package bot is shardgate's GitHub App: webhook intake, GitHub access per
// installation, and the orchestration of plans, reports and applies.
package bot

import (
	"context"
)

// EventHandler handles the webhook events it names. One small type per event.
type EventHandler interface {
	// Handles lists the X-GitHub-Event values this handler takes.
	Handles() []string
	// Handle processes one delivery. It runs from the durable queue, never in
	// the HTTP request; a returned error marks the job failed and is logged.
	Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error
}
