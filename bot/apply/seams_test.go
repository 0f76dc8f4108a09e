package apply

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/livestate"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// The pre-flight and convergence decisions of an apply, run against the
// coordinator simulator: no terraform, no GitHub, no sleeps (the poll between
// pre-flight reads is zero, and every read of the clock moves it a minute, so
// a wait ends by the clock, not by time passing).

const seamPrefix = "create-order"

const (
	firstHead  = "1111111111111111111111111111111111111111"
	pushedHead = "2222222222222222222222222222222222222222"
)

var seamRef = pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: 7}

// applySide stands in for the planning side: every progress report refreshes
// the comment, and onRefresh lets a test move the world on meanwhile.
type applySide struct{ onRefresh func() }

func (a *applySide) Checkout(context.Context, pullreq.Ref, string) (string, func(), error) {
	return "", func() {}, nil
}

func (a *applySide) RefreshComment(context.Context, ghapp.API, pullreq.Ref, *applyqueue.Job) error {
	if a.onRefresh != nil {
		a.onRefresh()
	}
	return nil
}

type applyWorld struct {
	run    *applyRun
	sim    *coordsim.Sim
	coord  *coord.Client
	side   *applySide
	clock  *fakeclock.Clock
	rec    records.Store
	stream string
}

// newApplyWorld is an apply of a scale of seamPrefix (a group at 2 shards,
// members live unless membersPerGroup is 0) to target shards.
func newApplyWorld(t *testing.T, membersPerGroup, target int) *applyWorld {
	t.Helper()
	ctx := context.Background()
	sim := coordsim.New(coordsim.WithMembersPerGroup(membersPerGroup))
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	cfg := &serverconfig.Config{ConvergeTimeout: time.Minute,
		Coordinators: []serverconfig.CoordinatorCredentials{{URLPrefix: srv.URL, Username: "admin", Password: serverconfig.NewSecret("password")}}}
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	now := func() time.Time { clock.Advance(time.Minute); return clock.Now() }
	coords := livestate.New(cfg, st, quietLog(), nil, nil)
	client, err := coords.Client(planparse.NormalizeURL(srv.URL))
	require.NoError(t, err)
	_, err = client.CreateGroup(ctx, seamPrefix, "billing", coord.CreateRequest{InitialShardCount: 2, RequestedBy: "test"})
	require.NoError(t, err)

	rec := records.New(st, redact.New())
	side := &applySide{}
	a := &Applier{Config: cfg, Records: rec, Applies: applyqueue.New(st, "test", 0, now), Coords: coords, PR: side, Now: now,
		PreflightWait: 10 * time.Minute, AttestationWait: 10 * time.Minute, ProgressEvery: time.Hour}
	stream := planparse.StreamKey(planparse.NormalizeURL(srv.URL), seamPrefix)
	change := planparse.Change{Action: planparse.ActionScale, StreamPrefix: seamPrefix, ConsumerGroup: "billing",
		Coordinator: planparse.NormalizeURL(srv.URL), Stream: stream, ShardsBefore: intp(2), ShardsAfter: intp(target)}
	job := &applyqueue.Job{Seq: "1", Ref: seamRef, Project: "streams", Streams: []string{stream}, ReviewedSHA: firstHead, MergeSHA: pushedHead}
	r := &applyRun{s: a, job: job, started: now(),
		reviewed: &records.Plan{Project: "streams", ChangeSet: &planparse.ChangeSet{Changes: []planparse.Change{change}}}}
	return &applyWorld{run: r, sim: sim, coord: client, side: side, clock: clock, rec: rec, stream: stream}
}

func intp(n int) *int { return &n }

func quietLog() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

// scale starts a migration of the stream to n shards, as another change would.
func (w *applyWorld) scale(t *testing.T, n int) {
	t.Helper()
	_, err := w.coord.ScaleStream(context.Background(), seamPrefix, coord.ScaleRequest{TargetShardCount: n, RequestedBy: "someone", Reason: "test"})
	require.NoError(t, err)
}

// settle ticks the simulator until no migration is active.
func (w *applyWorld) settle(t *testing.T) {
	t.Helper()
	for range 200 {
		st, err := w.coord.Stream(context.Background(), seamPrefix)
		require.NoError(t, err)
		active := false
		for _, g := range st.Groups {
			active = active || g.ActiveMigration != nil
		}
		if !active {
			return
		}
		w.sim.Tick()
	}
	t.Fatal("the migration never finished")
}

func TestPreflightDecisions(t *testing.T) {
	ctx := context.Background()
	t.Run("a free stream with live members: go on", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		_, reason, ok := w.run.preflight(ctx)
		require.True(t, ok, reason)
	})
	t.Run("an active migration that ends while waiting: go on", func(t *testing.T) {
		w := newApplyWorld(t, 2, 6)
		w.scale(t, 4)
		w.side.onRefresh = func() { w.sim.Tick() } // the world moves while the apply waits
		_, reason, ok := w.run.preflight(ctx)
		require.True(t, ok, reason)
	})
	t.Run("an active migration past the wait: fail, naming it", func(t *testing.T) {
		w := newApplyWorld(t, 2, 6)
		w.scale(t, 4)
		state, reason, ok := w.run.preflight(ctx)
		require.False(t, ok)
		require.Equal(t, applyqueue.Failed, state)
		require.Contains(t, reason, "pre-flight: stream "+seamPrefix+" still has an active migration after 10m0s")
	})
	t.Run("resumed after a crash, the migration is the apply's own: go on, converge waits", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.scale(t, 4)
		w.run.resuming = true
		_, reason, ok := w.run.preflight(ctx)
		require.True(t, ok, reason)
	})
	t.Run("a scale-out of a group without live members: refuse at once", func(t *testing.T) {
		w := newApplyWorld(t, 0, 4)
		refreshes := 0
		w.side.onRefresh = func() { refreshes++ }
		state, reason, ok := w.run.preflight(ctx)
		require.False(t, ok)
		require.Equal(t, applyqueue.Failed, state)
		require.True(t, strings.HasPrefix(reason, "pre-flight refused: "), reason)
		require.Zero(t, refreshes, "not waited on: no wait was shown (the start is not)")
	})
	t.Run("a coordinator outside the configuration: never called", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.run.s.Config.Coordinators = nil
		state, reason, ok := w.run.preflight(ctx)
		require.False(t, ok)
		require.Equal(t, applyqueue.Failed, state)
		require.Contains(t, reason, "is not covered by this server's configuration")
	})
}

// An attestation the review relied on must still be fresh when the apply
// starts; an expired one is asked for again and waited for, until the wait
// ends.
func TestPreflightWaitsForAFreshAttestation(t *testing.T) {
	ctx := context.Background()
	attest := func(w *applyWorld, expires time.Time) {
		require.NoError(t, w.rec.PutAttestation(ctx, seamRef, policy.Attestation{StreamPrefix: seamPrefix, Actor: "alice",
			HeadSHA: firstHead, CreatedAt: w.clock.Now(), ExpiresAt: expires}))
	}
	t.Run("expired and never renewed", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.run.reviewed.Decision.AttestationsUsed = []policy.Attestation{{StreamPrefix: seamPrefix}}
		attest(w, w.clock.Now().Add(-time.Second))
		_, reason, ok := w.run.preflight(ctx)
		require.False(t, ok)
		require.Contains(t, reason, "the producer-quiesce attestation for "+seamPrefix+" expired and no fresh one came within 10m0s")
	})
	t.Run("renewed while waiting", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.run.reviewed.Decision.AttestationsUsed = []policy.Attestation{{StreamPrefix: seamPrefix}}
		attest(w, w.clock.Now().Add(-time.Second))
		asked := false
		w.side.onRefresh = func() {
			if strings.Contains(w.run.job.Progress, "`/shardgate attest quiesce "+seamPrefix+"`") { // the PR says what to do
				asked = true
				attest(w, w.clock.Now().Add(time.Hour))
			}
		}
		_, reason, ok := w.run.preflight(ctx)
		require.True(t, ok, reason)
		require.True(t, asked)
	})
}

func TestConvergenceDecisions(t *testing.T) {
	ctx := context.Background()
	t.Run("converged at the target", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.scale(t, 4) // what terraform apply did
		w.settle(t)
		state, reason := w.run.converge(ctx, w.run.reviewed.ChangeSet.Changes)
		require.Equal(t, applyqueue.Applied, state, reason)
		require.Contains(t, reason, "applied and converged in ")
		require.Contains(t, reason, "`"+seamPrefix+"` at 4 shards")
	})
	t.Run("resumed after the apply: the reviewed targets are waited for", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.scale(t, 4)
		w.settle(t)
		state, reason := w.run.converge(ctx, nil)
		require.Equal(t, applyqueue.Applied, state, reason)
		require.Contains(t, reason, "at 4 shards")
	})
	t.Run("nothing scaled", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.run.job.Streams = nil
		state, reason := w.run.converge(ctx, nil)
		require.Equal(t, applyqueue.Applied, state)
		require.Equal(t, "applied; nothing to converge (no shard count changed)", reason)
	})
	t.Run("not converged within the timeout", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.scale(t, 4) // never ticked: the migration stays active
		w.run.s.Config.ConvergeTimeout = time.Nanosecond
		state, reason := w.run.converge(ctx, w.run.reviewed.ChangeSet.Changes)
		require.Equal(t, applyqueue.Failed, state)
		require.Contains(t, reason, "applied, but stream "+seamPrefix+" did not converge within 1ns")
	})
	t.Run("the coordinator's metadata went back", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.scale(t, 4)
		w.settle(t) // the client saw the versions of the scale
		require.True(t, w.sim.RewindMetadataVersion(seamPrefix, "billing", 3))
		state, reason := w.run.converge(ctx, w.run.reviewed.ChangeSet.Changes)
		require.Equal(t, applyqueue.Failed, state)
		require.Contains(t, reason, "coordinator metadata went back while converging")
	})
	t.Run("an interrupted wait is not a failure", func(t *testing.T) {
		w := newApplyWorld(t, 2, 4)
		w.scale(t, 4)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		state, reason := w.run.converge(cctx, w.run.reviewed.ChangeSet.Changes)
		require.Equal(t, applyqueue.Converging, state)
		require.Equal(t, "interrupted", reason)
	})
}
