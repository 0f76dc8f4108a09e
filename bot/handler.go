// Package bot is shardgate's GitHub App: webhook intake, GitHub access per
// installation, and the orchestration of plans, reports and applies.
package bot

import (
	"context"
	"net/http"

	"github.com/google/go-github/v60/github"
)

// EventHandler handles the webhook events it names. One small type per event.
type EventHandler interface {
	// Handles lists the X-GitHub-Event values this handler takes.
	Handles() []string
	// Handle processes one delivery. It runs from the durable queue, never in
	// the HTTP request; a returned error marks the job failed and is logged.
	Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error
}

// ClientCreator makes GitHub clients authenticated as one installation of the
// App. Implementations cache clients per installation id.
type ClientCreator interface {
	NewInstallationClient(installationID int64) (*github.Client, error)
	// InstallationHTTPClient is the authenticated transport of that
	// installation, for downloads (tarballs) go-github does not wrap.
	InstallationHTTPClient(installationID int64) (*http.Client, error)
}
