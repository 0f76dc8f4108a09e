package coord_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

// These tests pin the simulator to the coordinator's code behaviour
// (docs/coordinator.md §1-§3) wherever shardgate's logic depends on it.

// epochs is what a reader sees of a group's counters.
type epochs struct{ group, assignment, metadata int64 }

func readEpochs(t *testing.T, e *env, prefix, group string) (epochs, *coord.Group) {
	t.Helper()
	g, err := e.client.Group(context.Background(), prefix, group)
	require.NoError(t, err)
	return epochs{g.GroupEpoch, g.AssignmentEpoch, g.MetadataVersion}, g
}

func TestNewGroupEpochs(t *testing.T) {
	t.Run("no members: EMPTY at 1/1/1", func(t *testing.T) {
		e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(0)})
		created, err := e.client.CreateGroup(context.Background(), "orders", "billing", coord.CreateRequest{InitialShardCount: 4, RequestedBy: "t"})
		require.NoError(t, err)
		require.Equal(t, coord.GroupEmpty, created.State)
		require.Equal(t, epochs{1, 1, 1}, epochs{created.GroupEpoch, created.AssignmentEpoch, created.MetadataVersion})
		got, g := readEpochs(t, e, "orders", "billing")
		require.Equal(t, epochs{1, 1, 1}, got)
		require.Equal(t, coord.GroupEmpty, g.State)
		sc, err := e.client.CreateStream(context.Background(), "payments", coord.CreateRequest{RequestedBy: "t"})
		require.NoError(t, err)
		require.Equal(t, int64(1), sc.MetadataVersion)
	})
	t.Run("members join after the create, each bumping both counters", func(t *testing.T) {
		e := newEnv(t, nil) // two simulated consumers per group
		created, err := e.client.CreateGroup(context.Background(), "orders", "billing", coord.CreateRequest{InitialShardCount: 4, RequestedBy: "t"})
		require.NoError(t, err)
		require.Equal(t, coord.GroupEmpty, created.State, "the create answers before any consumer joined")
		require.Equal(t, epochs{1, 1, 1}, epochs{created.GroupEpoch, created.AssignmentEpoch, created.MetadataVersion})
		got, _ := readEpochs(t, e, "orders", "billing")
		require.Equal(t, epochs{3, 3, 3}, got)
	})
}

// TestVersionBumpsOverOneScale follows every counter through a scale:
// ACTIVE bumps both, ACTIVE->DRAINING bumps both, DRAINING->DEPRECATED bumps
// metadataVersion only; assignmentEpoch equals groupEpoch after each reconcile.
func TestVersionBumpsOverOneScale(t *testing.T) {
	tests := []struct {
		name    string
		members int
		from    int
		to      int
		// after[i] is the migration state and counters after i ticks (0 = right after the 202).
		after []struct {
			state coord.MigrationState
			ep    epochs
		}
	}{
		{name: "scale-out with members", members: 2, from: 4, to: 8, after: []struct {
			state coord.MigrationState
			ep    epochs
		}{
			{coord.MigrationActive, epochs{4, 4, 4}},
			{coord.MigrationDraining, epochs{5, 5, 5}},
			{coord.MigrationDeprecated, epochs{5, 5, 6}},
		}},
		{name: "scale-in with members", members: 2, from: 8, to: 4, after: []struct {
			state coord.MigrationState
			ep    epochs
		}{
			{coord.MigrationActive, epochs{4, 4, 4}},
			{coord.MigrationDraining, epochs{5, 5, 5}},
			{coord.MigrationDeprecated, epochs{5, 5, 6}},
		}},
		{name: "scale-in with no live member: ACTIVE -> DRAINING -> DEPRECATED in one pass", members: 0, from: 8, to: 2, after: []struct {
			state coord.MigrationState
			ep    epochs
		}{
			{coord.MigrationActive, epochs{2, 2, 2}},
			{coord.MigrationDeprecated, epochs{3, 3, 4}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(tt.members)})
			mustCreate(t, e, "orders", "billing", tt.from)
			e.ticks(1)
			res, err := scaleTo(e, "orders", tt.to)
			require.NoError(t, err)
			id := res.Migrations[0].ReshardingID
			for i, want := range tt.after {
				if i > 0 {
					e.ticks(1)
				}
				got, _ := readEpochs(t, e, "orders", "billing")
				require.Equal(t, want.ep, got, "counters after %d ticks", i)
				require.Equal(t, want.state, migState(t, e, "orders", "billing", id), "after %d ticks", i)
			}
		})
	}
}

func TestScaleInWithoutMembersStuckDrainStopsAtDraining(t *testing.T) {
	e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(0)})
	mustCreate(t, e, "orders", "billing", 8)
	e.sim.SetDrainingStuck("orders", true)
	res, err := scaleTo(e, "orders", 2)
	require.NoError(t, err)
	e.ticks(3)
	require.Equal(t, coord.MigrationDraining, migState(t, e, "orders", "billing", res.Migrations[0].ReshardingID))
	got, _ := readEpochs(t, e, "orders", "billing")
	require.Equal(t, epochs{3, 3, 3}, got, "DRAINING bumped both counters once; DEPRECATED has not happened")
}

// TestNoReaderSeesAssigning reads every group view through a whole lifecycle:
// ASSIGNING is set and overwritten inside one reconcile, and assignmentEpoch
// equals groupEpoch whenever the group has members.
func TestNoReaderSeesAssigning(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	var seen []coord.GroupState
	check := func(step string) {
		t.Helper()
		for _, name := range []string{"audit", "billing"} {
			g, err := e.client.Group(ctx, "orders", name)
			require.NoError(t, err)
			require.NotEqual(t, coord.GroupAssigning, g.State, step)
			require.Equal(t, g.GroupEpoch, g.AssignmentEpoch, "%s: %s", step, name)
			asg, err := e.client.Assignments(ctx, "orders", name)
			require.NoError(t, err)
			require.Empty(t, asg.InvariantViolations, step)
			seen = append(seen, g.State)
		}
		all, err := e.client.Groups(ctx)
		require.NoError(t, err)
		for _, g := range all {
			require.NotEqual(t, coord.GroupAssigning, g.State, step)
		}
	}
	mustCreate(t, e, "orders", "audit", 4)
	mustCreate(t, e, "orders", "billing", 4)
	check("after create")
	for i, target := range []int{8, 3, 0, 5} {
		_, err := scaleTo(e, "orders", target)
		require.NoError(t, err)
		check(fmt.Sprintf("scale %d accepted", i))
		for tick := 0; tick < 4; tick++ {
			e.ticks(1)
			check(fmt.Sprintf("scale %d tick %d", i, tick))
		}
	}
	require.True(t, e.sim.SetLiveMembers("orders", "billing", 3))
	check("member joined")
	e.ticks(2)
	check("member joined, ticked")
	require.Contains(t, seen, coord.GroupReconciling)
	require.Contains(t, seen, coord.GroupStable)
}

// A scale-in's members revoke the removed shards in place: once they hold
// exactly their target the group is STABLE and the migration DRAINING, while
// revokeProgress still lists the removed shards. STABLE alone is not "done".
func TestStableWhileRevokingRemovedShards(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 8)
	e.ticks(1)
	res, err := scaleTo(e, "orders", 4)
	require.NoError(t, err)
	e.ticks(1)
	asg, err := e.client.Assignments(context.Background(), "orders", "billing")
	require.NoError(t, err)
	require.NotEmpty(t, asg.RevokeProgress, "members revoke the removed shards")
	for _, shards := range asg.RevokeProgress {
		for _, s := range shards {
			require.GreaterOrEqual(t, s.ShardIndex, 4, "only removed shards are revoked")
		}
	}
	_, g := readEpochs(t, e, "orders", "billing")
	require.Equal(t, coord.GroupStable, g.State)
	require.Equal(t, coord.MigrationDraining, migState(t, e, "orders", "billing", res.Migrations[0].ReshardingID))
}

func TestStreamKeyPatternCarriesThePrefix(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "create-order", "billing", 2)
	r, err := e.client.ProducerRouting(context.Background(), "create-order", "billing")
	require.NoError(t, err)
	require.Equal(t, "create-order:{shardIndex}", r.StreamKeyPattern)
	require.Equal(t, "create-order:1", r.Shards[1].StreamKey)
}

// TestInvariantViolations: a reconcile that does not run (SetReconcileStalled)
// leaves assignmentEpoch behind groupEpoch and the added shards without a
// target owner; both are listed, in the coordinator's wording.
// TestMetadataSyncAfterRestore: restoring a group's metadata from an older
// backup lowers its metadataVersion below what its consumers saw. Their next
// heartbeat starts a metadata sync; until every live member has synced and no
// handoff is pending, scale and rollback answer 409 METADATA_SYNC_IN_PROGRESS.
func TestRewindStartsSyncOnNextHeartbeat(t *testing.T) {
	e := newEnv(t, nil, coord.WithRetry(1, 0))
	mustCreate(t, e, "orders", "billing", 4)
	e.ticks(1)
	require.True(t, e.sim.RewindMetadataVersion("orders", "billing", 1))
	_, err := scaleTo(e, "orders", 6)
	require.NoError(t, err, "no heartbeat since the rewind: the coordinator cannot know yet (a real race)")

	e2 := newEnv(t, nil, coord.WithRetry(1, 0))
	mustCreate(t, e2, "orders", "billing", 4)
	e2.ticks(1)
	require.True(t, e2.sim.RewindMetadataVersion("orders", "billing", 1))
	e2.ticks(1)
	_, err = scaleTo(e2, "orders", 6)
	require.True(t, coord.IsCode(err, coord.CodeMetadataSyncInProgress), "%v", err)
	e2.ticks(1)
	_, err = scaleTo(e2, "orders", 6)
	require.NoError(t, err, "every member synced and nothing was handed off")
}
