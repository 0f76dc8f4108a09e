package plan

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/keyedmutex"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
)

// The unit tests of the plan flow's decisions talk to GitHub through ghapp's
// narrow interfaces, answered by ghapptest's in-memory GitHub: no terraform,
// no HTTP, no sleeps; time is a fakeclock.Clock both sides read.

// seamPlanner is a Planner with only what the flow's decisions use: the
// configuration, the records on a bbolt store, a redactor and a clock.
func seamPlanner(t *testing.T, cfg *serverconfig.Config, secrets ...string) (*Planner, *ghapptest.GitHub, *fakeclock.Clock) {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	if cfg == nil {
		cfg = &serverconfig.Config{}
	}
	cfg.Sandbox = serverconfig.SandboxLandlock // no unsandboxed notice in the comment
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	r := redact.New(secrets...)
	rec := records.New(st, r)
	approvers := approval.NewApprovers(cfg, clock.Now)
	s := &Planner{Config: cfg, Records: rec, Now: clock.Now, PRLocks: &keyedmutex.Mutex{},
		Labels: approval.NewLabels(rec, approvers), Comments: prreport.NewComments(r),
		Checks: prreport.NewChecks(st, 0, r, clock.Now), Render: &prreport.Renderer{Approvers: approvers.Text(), Redact: r}}
	return s, ghapptest.New(clock.Now), clock
}

const (
	firstHead  = "1111111111111111111111111111111111111111"
	pushedHead = "2222222222222222222222222222222222222222"
)

var seamRef = pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: 7}
