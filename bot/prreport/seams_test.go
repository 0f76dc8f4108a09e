package prreport

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/store"
)

// The comment and the check runs are tested through ghapp's narrow
// interfaces, answered by ghapptest's in-memory GitHub: no terraform, no
// HTTP, no sleeps; time is a fakeclock.Clock both sides read.

const (
	firstHead  = "1111111111111111111111111111111111111111"
	pushedHead = "2222222222222222222222222222222222222222"
)

var seamRef = pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: 7}

// world is what the tests post with: comments, check runs on a bbolt store,
// a renderer, all redacting secrets, and the in-memory GitHub.
type world struct {
	comments *Comments
	checks   *Checks
	render   *Renderer
}

func newWorld(t *testing.T, secrets ...string) (*world, *ghapptest.GitHub, *fakeclock.Clock) {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	r := redact.New(secrets...)
	w := &world{comments: NewComments(r), checks: NewChecks(st, 0, r, clock.Now),
		render: &Renderer{Approvers: "an approver (alice) who is not the PR author", Redact: r}}
	return w, ghapptest.New(clock.Now), clock
}
