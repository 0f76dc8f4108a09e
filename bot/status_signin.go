package bot

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/bot/statuspage"
	"github.com/shardgate/shardgate/github/ghapp"
)

// statusSignIn is the status page's sign-in with GitHub (status.github_oauth),
// nil when not configured. Whether the user is an approver is the same
// question the approvals ask (approval.Approvers, its team answers cached),
// asked with the user's own token: a member sees their own membership.
func (s *Server) statusSignIn() *statuspage.SignIn {
	o := s.cfg.Status.OAuth
	if o == nil {
		return nil
	}
	transport := s.ghTransport
	if transport == nil {
		transport = http.DefaultTransport
	}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	return &statuspage.SignIn{ClientID: o.ClientID, ClientSecret: o.ClientSecret.Reveal(), APIURL: s.cfg.GitHubAPIURL, Client: client,
		Approver: func(ctx context.Context, token, login string) (bool, error) {
			gh, err := userClient(s.cfg.GitHubAPIURL, token, transport)
			if err != nil {
				return false, err
			}
			return s.approvers.IsApprover(ctx, ghapp.FromClient(gh), login)
		}}
}

// userClient is a go-github client that calls as the user of token.
func userClient(apiURL, token string, base http.RoundTripper) (*github.Client, error) {
	u, err := url.Parse(apiURL)
	if err != nil {
		return nil, fmt.Errorf("github.api_url: %w", err)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	gh := github.NewClient(&http.Client{Transport: bearer{token: token, next: base}, Timeout: 30 * time.Second})
	gh.BaseURL = u
	return gh, nil
}

// bearer adds the user's token to each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
