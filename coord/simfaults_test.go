package coord_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

func TestInvariantViolations(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 2)
	e.ticks(1)
	require.True(t, e.sim.SetReconcileStalled("orders", "billing", true))
	require.False(t, e.sim.SetReconcileStalled("orders", "nope", true))
	_, err := scaleTo(e, "orders", 4)
	require.NoError(t, err)
	asg, err := e.client.Assignments(ctx, "orders", "billing")
	require.NoError(t, err)
	require.Equal(t, []string{
		"readable shard ShardId(shardIndex=2) has no target owner",
		"readable shard ShardId(shardIndex=3) has no target owner",
		"assignmentEpoch 3 does not match groupEpoch 4",
	}, asg.InvariantViolations)

	require.True(t, e.sim.SetReconcileStalled("orders", "billing", false))
	e.ticks(1)
	asg, err = e.client.Assignments(ctx, "orders", "billing")
	require.NoError(t, err)
	require.Empty(t, asg.InvariantViolations)
}

func TestMetadataSyncAfterRestore(t *testing.T) {
	ctx := context.Background()
	rb := coord.RollbackRequest{RequestedBy: "t", Reason: "undo"}
	e := newEnv(t, nil, coord.WithRetry(1, 0))
	mustCreate(t, e, "orders", "billing", 4)
	e.ticks(1)
	backup, ok := e.sim.Backup("orders", "billing")
	require.True(t, ok)
	_, ok = e.sim.Backup("orders", "nope")
	require.False(t, ok)
	before, _ := readEpochs(t, e, "orders", "billing")
	_, err := scaleTo(e, "orders", 8)
	require.NoError(t, err)
	e.ticks(3)
	require.Equal(t, 8, routingCount(t, e, "orders", "billing"))

	require.True(t, e.sim.Restore(backup))
	restored, _ := readEpochs(t, e, "orders", "billing")
	require.Equal(t, before, restored, "the restore brought the old counters back")
	require.Equal(t, 4, routingCount(t, e, "orders", "billing"), "and the old shard count")

	e.ticks(1) // the consumers heartbeat with the higher version they saw
	_, err = scaleTo(e, "orders", 6)
	require.True(t, coord.IsCode(err, coord.CodeMetadataSyncInProgress), "%v", err)
	_, err = e.client.ScaleGroup(ctx, "orders", "billing", coord.ScaleRequest{TargetShardCount: 6, RequestedBy: "t", Reason: "t"})
	require.True(t, coord.IsCode(err, coord.CodeMetadataSyncInProgress), "%v", err)
	_, err = e.client.Rollback(ctx, "orders", "billing", "reshard-any", rb)
	require.True(t, coord.IsCode(err, coord.CodeMetadataSyncInProgress), "checked before the migration lookup: %v", err)

	// The consumers adopt the restored version, then revoke the shards the
	// restored metadata no longer has; the sync ends once nothing is handed off.
	var ticks int
	for ticks = 1; ticks <= 5; ticks++ {
		e.ticks(1)
		if _, err = scaleTo(e, "orders", 6); err == nil {
			break
		}
		require.True(t, coord.IsCode(err, coord.CodeMetadataSyncInProgress), "%v", err)
	}
	require.NoError(t, err)
	require.Equal(t, 2, ticks, "one tick to adopt the version and revoke, one to finish the revokes")
}

func TestRestoreWithoutLiveMembersStartsNoSync(t *testing.T) {
	e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(0)})
	mustCreate(t, e, "orders", "billing", 4)
	backup, ok := e.sim.Backup("orders", "billing")
	require.True(t, ok)
	_, err := scaleTo(e, "orders", 2)
	require.NoError(t, err)
	e.ticks(1)
	require.True(t, e.sim.Restore(backup))
	e.ticks(2)
	_, err = scaleTo(e, "orders", 2)
	require.NoError(t, err, "no consumer reports the higher version, so nothing blocks the scale")
}
