package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

// tokenTransport authenticates as one installation with a token minted by
// the fake, standing in for ghinstallation in tests that do not exercise it.
type tokenTransport struct{ token string }

func (tt tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "token "+tt.token)
	return http.DefaultTransport.RoundTrip(r)
}

func newClient(t *testing.T, gh *Server, installationID int64) *github.Client {
	t.Helper()
	c := github.NewClient(&http.Client{Transport: tokenTransport{token: gh.InstallationToken(installationID)}})
	base, err := url.Parse(gh.URL())
	require.NoError(t, err)
	c.BaseURL = base
	return c
}

// errorRecorder stands in for the test given to New, so a test can assert
// the fake reported a failure without failing itself.
type errorRecorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (e *errorRecorder) Errorf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errors = append(e.errors, fmt.Sprintf(format, args...))
}

func (e *errorRecorder) Error(args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errors = append(e.errors, fmt.Sprint(args...))
}

func (e *errorRecorder) Errors() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.errors...)
}

// newRepoWithPR sets up acme/infra with a main branch holding one module and
// PR #1 from branch "change" editing it.
func newRepoWithPR(t *testing.T, gh *Server) (*GitRepo, PullRequest) {
	t.Helper()
	g := NewGitRepo(t)
	g.WriteFile("stacks/orders/main.tf", "resource \"null_resource\" \"a\" {}\n")
	g.WriteFile(".shardgate.yaml", "version: 1\n")
	g.Commit("base")
	g.Branch("change")
	g.WriteFile("stacks/orders/main.tf", "resource \"null_resource\" \"a\" {}\nresource \"null_resource\" \"b\" {}\n")
	g.WriteFile("stacks/payments/main.tf", "resource \"null_resource\" \"p\" {}\n")
	g.Commit("add b and payments")
	g.Checkout("main")
	gh.AddRepo("acme", "infra", g)
	pr := gh.OpenPR("acme", "infra", PullRequest{Title: "Scale orders", User: "alice", HeadRef: "change"})
	return g, pr
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
