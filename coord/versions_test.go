package coord_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

// One scale raises metadataVersion by 3 (ACTIVE, DRAINING, DEPRECATED) and more
// with member changes: a rise of any size is never a regression.
func TestVersionRiseOverScaleIsNotARegression(t *testing.T) {
	ctx := context.Background()
	mem := coord.NewMemoryVersions()
	e := newEnv(t, nil, coord.WithVersionMemory(mem))
	mustCreate(t, e, "orders", "audit", 4)
	mustCreate(t, e, "orders", "billing", 4)
	e.ticks(1)
	pre, err := e.client.Preflight(ctx, "orders", 8)
	require.NoError(t, err)
	require.True(t, pre.OK(), pre.Summary())
	start, _, err := mem.HighestMetadataVersion(ctx, "orders", "billing")
	require.NoError(t, err)

	_, err = scaleTo(e, "orders", 8)
	require.NoError(t, err)
	var versions []int64
	err = e.client.WaitConverged(ctx, "orders", 8, func(s coord.ConvergenceStatus) {
		versions = append(versions, s.Groups[1].MetadataVersion)
		if len(versions) == 2 {
			require.True(t, e.sim.SetLiveMembers("orders", "billing", 3), "a consumer joins mid-scale: one more bump")
		}
		e.ticks(1)
	})
	require.NoError(t, err)
	require.IsNonDecreasing(t, versions)
	end := versions[len(versions)-1]
	require.GreaterOrEqual(t, end-start, int64(3), "ACTIVE, DRAINING and DEPRECATED each bump metadataVersion")

	got, _, err := mem.HighestMetadataVersion(ctx, "orders", "billing")
	require.NoError(t, err)
	require.Equal(t, end, got, "the wait records what it saw")
	post, err := e.client.Preflight(ctx, "orders", 4)
	require.NoError(t, err)
	require.True(t, post.OK(), post.Summary())
}

// A restore from a backup taken before the scale lowers metadataVersion back to
// what the pre-flight saw; only a memory of the versions seen during the wait
// notices it.
func TestRestoreAfterScaleIsDetected(t *testing.T) {
	ctx := context.Background()
	mem := coord.NewMemoryVersions()
	e := newEnv(t, nil, coord.WithVersionMemory(mem))
	mustCreate(t, e, "orders", "billing", 4)
	e.ticks(1)
	backup, ok := e.sim.Backup("orders", "billing")
	require.True(t, ok)
	pre, err := e.client.Preflight(ctx, "orders", 8)
	require.NoError(t, err)
	require.True(t, pre.OK())
	_, err = scaleTo(e, "orders", 8)
	require.NoError(t, err)
	require.NoError(t, e.client.WaitConverged(ctx, "orders", 8, func(coord.ConvergenceStatus) { e.ticks(1) }))

	require.True(t, e.sim.Restore(backup))
	res, err := e.client.Preflight(ctx, "orders", 8)
	require.NoError(t, err)
	require.False(t, res.OK())
	require.Len(t, res.Blocking(), 1)
	require.Equal(t, coord.FindingMetadataRegressed, res.Blocking()[0].Kind)
	require.Contains(t, res.Summary(), "went back from 6 to 3")
}

func TestWaitConvergedStopsOnRestore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 4)
	e.ticks(1)
	backup, ok := e.sim.Backup("orders", "billing")
	require.True(t, ok)
	_, err := e.client.Preflight(ctx, "orders", 8)
	require.NoError(t, err)
	e.sim.SetDrainingStuck("orders", true) // the wait is still waiting when the restore comes
	_, err = scaleTo(e, "orders", 8)
	require.NoError(t, err)
	polls := 0
	err = e.client.WaitConverged(ctx, "orders", 8, func(coord.ConvergenceStatus) {
		polls++
		if polls == 2 {
			require.True(t, e.sim.Restore(backup))
		}
		e.ticks(1)
	})
	var reg *coord.MetadataRegressedError
	require.ErrorAs(t, err, &reg, "a restore ends the wait at once: %v", err)
	require.Equal(t, "billing", reg.ConsumerGroup)
	require.Equal(t, int64(3), reg.Current)
	require.Greater(t, reg.Highest, reg.Current)
	require.ErrorContains(t, err, "went back from")
	require.Equal(t, 2, polls, "the first poll after the restore ends the wait, without a progress report")
}

// Everything else is done, but the added shards have no target owner: the
// wait goes on until invariantViolations is empty.
func TestWaitConvergedWaitsForInvariantViolations(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 2)
	e.ticks(1)
	require.True(t, e.sim.SetReconcileStalled("orders", "billing", true))
	_, err := scaleTo(e, "orders", 4)
	require.NoError(t, err)
	var onlyViolations int
	err = e.client.WaitConverged(context.Background(), "orders", 4, func(s coord.ConvergenceStatus) {
		g := s.Groups[0]
		if onlyViolations < 3 && g.MigrationID == "" && g.RoutingShardCount == 4 && g.GroupState == coord.GroupStable && len(g.RevokingMembers) == 0 {
			require.False(t, s.Converged, "the migration is DEPRECATED, routing, state and revokes are done")
			require.Len(t, g.Pending, 1, g.Pending)
			require.Contains(t, g.Pending[0], "invariant violations: readable shard ShardId(shardIndex=2) has no target owner")
			onlyViolations++
			if onlyViolations == 3 {
				require.True(t, e.sim.SetReconcileStalled("orders", "billing", false))
			}
		}
		e.ticks(1)
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, onlyViolations, 3)
	asg, err := e.client.Assignments(context.Background(), "orders", "billing")
	require.NoError(t, err)
	require.Empty(t, asg.InvariantViolations)
}

// Routing, group state, revokes and invariants are all fine while a scale-in is
// held in DRAINING: the migration alone keeps the wait going.
func TestWaitConvergedWaitsForDeprecated(t *testing.T) {
	e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(2)})
	mustCreate(t, e, "orders", "billing", 8)
	e.ticks(1)
	e.sim.SetDrainingStuck("orders", true)
	_, err := scaleTo(e, "orders", 4)
	require.NoError(t, err)
	polls := 0
	err = e.client.WaitConverged(context.Background(), "orders", 4, func(s coord.ConvergenceStatus) {
		polls++
		if polls == 5 {
			g := s.Groups[0]
			require.False(t, s.Converged)
			require.Equal(t, coord.MigrationDraining, g.MigrationState)
			require.Len(t, g.Pending, 1, g.Pending)
			require.Contains(t, g.Pending[0], "is DRAINING")
			e.sim.SetDrainingStuck("orders", false)
		}
		e.ticks(1)
	})
	require.NoError(t, err)
	require.Greater(t, polls, 5)
}
