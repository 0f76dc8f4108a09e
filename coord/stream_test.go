package coord_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

func TestStreamView(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 4)
	mustCreate(t, e, "orders", "audit", 2)
	mustCreate(t, e, "payments", "ledger", 4)
	require.True(t, e.sim.SetLiveMembers("orders", "audit", 1))
	e.ticks(1)
	s, err := e.client.Stream(context.Background(), "orders")
	require.NoError(t, err)
	require.Len(t, s.Groups, 2)
	require.Equal(t, "audit", s.Groups[0].ConsumerGroup, "sorted by name")
	require.Equal(t, 2, s.Groups[0].ShardCount)
	require.Equal(t, 1, s.Groups[0].LiveMembers)
	require.Equal(t, 2, s.Groups[1].LiveMembers)
	require.Equal(t, coord.GroupStable, s.Groups[1].State)
	require.Equal(t, []int{2, 4}, s.ShardCounts())

	empty, err := e.client.Stream(context.Background(), "nope")
	require.NoError(t, err)
	require.Empty(t, empty.Groups)
}

func TestPreflight(t *testing.T) {
	tests := []struct {
		name    string
		members int
		setup   func(t *testing.T, e *env)
		target  int
		want    []coord.FindingKind
		blocked bool
	}{
		{name: "clean scale-out", members: 2, target: 8},
		{name: "active migration on any group", members: 2, target: 8, blocked: true,
			setup: func(t *testing.T, e *env) {
				_, err := scaleTo(e, "orders", 6)
				require.NoError(t, err)
			},
			want: []coord.FindingKind{coord.FindingActiveMigration, coord.FindingActiveMigration}},
		{name: "scale-out without live members", members: 0, target: 8, blocked: true,
			want: []coord.FindingKind{coord.FindingNoLiveMembers, coord.FindingNoLiveMembers}},
		{name: "scale-in without live members is fine", members: 0, target: 2},
		{name: "metadataVersion went backwards", members: 2, target: 8, blocked: true,
			setup: func(t *testing.T, e *env) {
				_, err := e.client.Preflight(context.Background(), "orders", 4) // remember the versions
				require.NoError(t, err)
				require.True(t, e.sim.RewindMetadataVersion("orders", "billing", 1))
			},
			want: []coord.FindingKind{coord.FindingMetadataRegressed}},
		{name: "groups disagree on the count (not blocking)", members: 2, target: 8,
			setup: func(t *testing.T, e *env) {
				_, err := e.client.ScaleGroup(context.Background(), "orders", "audit", coord.ScaleRequest{TargetShardCount: 2, RequestedBy: "t", Reason: "t"})
				require.NoError(t, err)
				e.ticks(4)
			},
			want: []coord.FindingKind{coord.FindingShardCountMismatch}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(tt.members)})
			mustCreate(t, e, "orders", "audit", 4)
			mustCreate(t, e, "orders", "billing", 4)
			e.ticks(1)
			if tt.setup != nil {
				tt.setup(t, e)
			}
			res, err := e.client.Preflight(context.Background(), "orders", tt.target)
			require.NoError(t, err)
			var kinds []coord.FindingKind
			for _, f := range res.Findings {
				kinds = append(kinds, f.Kind)
				require.NotEmpty(t, f.Message)
			}
			require.Equal(t, tt.want, kinds)
			require.Equal(t, !tt.blocked, res.OK(), res.Summary())
		})
	}
}

func TestPreflightRemembersThroughVersionMemory(t *testing.T) {
	mem := coord.NewMemoryVersions()
	e := newEnv(t, nil, coord.WithVersionMemory(mem))
	mustCreate(t, e, "orders", "billing", 4)
	_, err := e.client.Preflight(context.Background(), "orders", 8)
	require.NoError(t, err)
	v, ok, err := mem.HighestMetadataVersion(context.Background(), "orders", "billing")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(3), v, "created at 1, then each of the two simulated consumers joined: one bump each")

	// A new client (a restarted bot) sharing the memory still sees the regression.
	require.True(t, e.sim.RewindMetadataVersion("orders", "billing", 1))
	fresh := e.newClient(t, coord.WithBasicAuth("admin", "password"), coord.WithVersionMemory(mem))
	res, err := fresh.Preflight(context.Background(), "orders", 8)
	require.NoError(t, err)
	require.False(t, res.OK())
	require.Contains(t, res.Summary(), "went back from 3 to 2")
}

func TestWaitConverged(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "audit", 4)
	mustCreate(t, e, "orders", "billing", 4)
	e.ticks(1)
	res, err := scaleTo(e, "orders", 8)
	require.NoError(t, err)

	var polls []coord.ConvergenceStatus
	err = e.client.WaitConverged(context.Background(), "orders", 8, func(s coord.ConvergenceStatus) {
		polls = append(polls, s)
		e.ticks(1) // the simulator moves on between polls
	})
	require.NoError(t, err)
	require.Greater(t, len(polls), 1, "routing shows 8 at once, but the migration is not done")
	first := polls[0]
	require.False(t, first.Converged)
	require.Equal(t, 8, first.Groups[0].RoutingShardCount)
	require.Equal(t, res.Migrations[0].ReshardingID, first.Groups[0].MigrationID)
	require.Equal(t, coord.MigrationActive, first.Groups[0].MigrationState)
	last := polls[len(polls)-1]
	require.True(t, last.Converged)
	for _, g := range last.Groups {
		require.True(t, g.Done(), g.Pending)
		require.Equal(t, coord.GroupStable, g.GroupState)
	}
	for i, g := range []string{"audit", "billing"} {
		require.Equal(t, coord.MigrationDeprecated, migState(t, e, "orders", g, res.Migrations[i].ReshardingID))
	}
}

func TestWaitConvergedEmptyGroup(t *testing.T) {
	e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(0)})
	mustCreate(t, e, "orders", "billing", 8)
	_, err := scaleTo(e, "orders", 4)
	require.NoError(t, err)
	err = e.client.WaitConverged(context.Background(), "orders", 4, func(coord.ConvergenceStatus) { e.ticks(1) })
	require.NoError(t, err, "a group without members converges in state EMPTY")
}

func TestWaitConvergedTimesOutOnStuckDrain(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 8)
	e.ticks(1)
	e.sim.SetDrainingStuck("orders", true)
	_, err := scaleTo(e, "orders", 4)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var last coord.ConvergenceStatus
	err = e.client.WaitConverged(ctx, "orders", 4, func(s coord.ConvergenceStatus) {
		last = s
		e.ticks(1)
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var nc *coord.NotConvergedError
	require.ErrorAs(t, err, &nc)
	require.Equal(t, coord.MigrationDraining, last.Groups[0].MigrationState)
	require.Contains(t, err.Error(), "billing: migration reshard-")
	require.Contains(t, err.Error(), "is DRAINING")
}

func TestWaitConvergedReportsMissingStream(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := e.client.WaitConverged(ctx, "nope", 4, nil)
	require.ErrorContains(t, err, "no coordinator groups for the prefix")
}
