package bot

import (
	"fmt"
	"net/http"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/phases"
	"github.com/shardgate/shardgate/internal/redact"
)

// githubClients are the App's GitHub clients per installation, over the
// transport's layers: retries (unless a test gave its own transport), what
// the status page shows of GitHub, the plan jobs' phases, redaction.
func (s *Server) githubClients() (ghapp.ClientCreator, error) {
	cfg := s.cfg
	base := s.ghTransport
	if base == nil {
		rt := ghapp.NewRetryTransport(http.DefaultTransport)
		rt.PassRateLimits = true // jobs wait for them postponed (githubWait)
		rt.Now = s.now
		base = rt
	}
	base = s.reach.Transport(ServiceGitHub, nil, base) // as the retries ended
	base = phases.Transport(phases.GitHub, base)       // a plan job's time in GitHub calls
	// Redacted before the retries, which then replay the redacted body.
	cc, err := ghapp.NewClientCreator(cfg.GitHubAPIURL, cfg.AppID, []byte(cfg.PrivateKey.Reveal()), redact.NewTransport(base, s.redact))
	if err != nil && cfg.PrivateKeyFile != "" {
		return nil, fmt.Errorf("github.private_key_file %s: %w (want the App's private key as GitHub gave it, a PEM file)", cfg.PrivateKeyFile, err)
	}
	if err != nil {
		return nil, err
	}
	cc.Budgets().SetClock(s.now)
	cc.SetPace(cfg.GitHubPace)
	return cc, nil
}
