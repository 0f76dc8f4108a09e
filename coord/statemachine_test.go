package coord_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

func mustCreate(t *testing.T, e *env, prefix, group string, shards int) {
	t.Helper()
	_, err := e.client.CreateGroup(context.Background(), prefix, group, coord.CreateRequest{InitialShardCount: shards, RequestedBy: "test"})
	require.NoError(t, err)
}

func scaleTo(e *env, prefix string, n int) (*coord.StreamScale, error) {
	return e.client.ScaleStream(context.Background(), prefix, coord.ScaleRequest{TargetShardCount: n, RequestedBy: "test", Reason: "test"})
}

func migState(t *testing.T, e *env, prefix, group, id string) coord.MigrationState {
	t.Helper()
	m, err := e.client.Migration(context.Background(), prefix, group, id)
	require.NoError(t, err)
	return m.State
}

func routingCount(t *testing.T, e *env, prefix, group string) int {
	t.Helper()
	r, err := e.client.ProducerRouting(context.Background(), prefix, group)
	require.NoError(t, err)
	require.Len(t, r.Shards, r.ShardCount)
	return r.ShardCount
}

// TestScaleLifecycle follows one migration tick by tick.
func TestScaleLifecycle(t *testing.T) {
	tests := []struct {
		name    string
		from    int
		to      int
		members int
		// states[i] is the migration state after i ticks.
		states []coord.MigrationState
	}{
		{name: "scale-out with members", from: 4, to: 8, members: 2,
			states: []coord.MigrationState{coord.MigrationActive, coord.MigrationDraining, coord.MigrationDeprecated}},
		// Members revoke removed shards while DRAINING; DEPRECATED waits for the revokes.
		{name: "scale-in with members: DRAINING while revoking, DEPRECATED once revoked", from: 8, to: 4, members: 2,
			states: []coord.MigrationState{coord.MigrationActive, coord.MigrationDraining, coord.MigrationDeprecated}},
		{name: "target 0 drains every shard", from: 4, to: 0, members: 2,
			states: []coord.MigrationState{coord.MigrationActive, coord.MigrationDraining, coord.MigrationDeprecated}},
		{name: "scale-in without members skips the revoke wait: DRAINING and DEPRECATED in one pass", from: 8, to: 2, members: 0,
			states: []coord.MigrationState{coord.MigrationActive, coord.MigrationDeprecated}},
		{name: "scale-out without members never leaves ACTIVE", from: 2, to: 4, members: 0,
			states: []coord.MigrationState{coord.MigrationActive, coord.MigrationActive, coord.MigrationActive, coord.MigrationActive, coord.MigrationActive}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(tt.members)})
			mustCreate(t, e, "orders", "billing", tt.from)
			e.ticks(2)
			res, err := scaleTo(e, "orders", tt.to)
			require.NoError(t, err)
			require.Equal(t, []string{"billing"}, res.AffectedConsumerGroups)
			id := res.Migrations[0].ReshardingID
			require.Equal(t, tt.from, res.Migrations[0].FromShardCount)
			// Routing flips as soon as the migration is ACTIVE.
			require.Equal(t, tt.to, routingCount(t, e, "orders", "billing"))
			for i, want := range tt.states {
				if i > 0 {
					e.ticks(1)
				}
				require.Equal(t, want, migState(t, e, "orders", "billing", id), "after %d ticks", i)
			}
			g, err := e.client.Group(context.Background(), "orders", "billing")
			require.NoError(t, err)
			if tt.states[len(tt.states)-1] == coord.MigrationDeprecated {
				require.Nil(t, g.ActiveMigration)
				wantState := coord.GroupStable
				if tt.members == 0 {
					wantState = coord.GroupEmpty
				}
				require.Equal(t, wantState, g.State)
				asg, err := e.client.Assignments(context.Background(), "orders", "billing")
				require.NoError(t, err)
				require.Empty(t, asg.RevokeProgress)
				require.Empty(t, asg.InvariantViolations)
			} else {
				require.NotNil(t, g.ActiveMigration)
				require.Equal(t, id, g.ActiveMigration.ReshardingID)
			}
		})
	}
}

func TestScaleOutWithoutMembersCompletesOnceMembersJoin(t *testing.T) {
	e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(0)})
	mustCreate(t, e, "orders", "billing", 2)
	res, err := scaleTo(e, "orders", 4)
	require.NoError(t, err)
	e.ticks(5)
	id := res.Migrations[0].ReshardingID
	require.Equal(t, coord.MigrationActive, migState(t, e, "orders", "billing", id))
	require.True(t, e.sim.SetLiveMembers("orders", "billing", 2))
	e.ticks(2)
	require.Equal(t, coord.MigrationDeprecated, migState(t, e, "orders", "billing", id))
}

func TestRollback(t *testing.T) {
	ctx := context.Background()
	rb := coord.RollbackRequest{RequestedBy: "test", Reason: "undo"}
	t.Run("allowed while ACTIVE, idempotent, per group", func(t *testing.T) {
		e := newEnv(t, []coordsim.Option{coordsim.WithMembersPerGroup(0)})
		mustCreate(t, e, "orders", "audit", 2)
		mustCreate(t, e, "orders", "billing", 2)
		res, err := scaleTo(e, "orders", 4)
		require.NoError(t, err)
		e.ticks(3)
		id := res.Migrations[1].ReshardingID
		m, err := e.client.Rollback(ctx, "orders", "billing", id, rb)
		require.NoError(t, err)
		require.Equal(t, coord.MigrationRolledBack, m.State)
		require.Equal(t, 2, routingCount(t, e, "orders", "billing"))
		require.Equal(t, 4, routingCount(t, e, "orders", "audit"), "rollback is per group")
		again, err := e.client.Rollback(ctx, "orders", "billing", id, rb)
		require.NoError(t, err)
		require.Equal(t, coord.MigrationRolledBack, again.State)
		g, err := e.client.Group(ctx, "orders", "billing")
		require.NoError(t, err)
		require.Nil(t, g.ActiveMigration)
	})
	refused := []struct {
		name  string
		setup func(t *testing.T, e *env) string
	}{
		{name: "DRAINING", setup: func(t *testing.T, e *env) string {
			e.sim.SetDrainingStuck("orders", true)
			res, err := scaleTo(e, "orders", 8)
			require.NoError(t, err)
			e.ticks(3)
			require.Equal(t, coord.MigrationDraining, migState(t, e, "orders", "billing", res.Migrations[0].ReshardingID))
			return res.Migrations[0].ReshardingID
		}},
		{name: "DEPRECATED", setup: func(t *testing.T, e *env) string {
			res, err := scaleTo(e, "orders", 8)
			require.NoError(t, err)
			e.ticks(3)
			return res.Migrations[0].ReshardingID
		}},
		{name: "PREPARING", setup: func(t *testing.T, e *env) string {
			e.sim.FailNextProvisioning("orders", "billing")
			_, err := scaleTo(e, "orders", 8)
			require.True(t, coord.IsCode(err, coord.CodeProvisioningFailed), "%v", err)
			ml, err := e.client.Migrations(ctx, "orders", "billing")
			require.NoError(t, err)
			require.NotNil(t, ml.ActiveReshardingID)
			return *ml.ActiveReshardingID
		}},
	}
	for _, tt := range refused {
		t.Run("refused when "+tt.name, func(t *testing.T) {
			e := newEnv(t, nil, coord.WithRetry(1, 0))
			mustCreate(t, e, "orders", "billing", 4)
			e.ticks(1)
			id := tt.setup(t, e)
			_, err := e.client.Rollback(ctx, "orders", "billing", id, rb)
			require.True(t, coord.IsCode(err, coord.CodeRollbackNotAllowed), "%v", err)
		})
	}
}

func TestConcurrentScalesOnOnePrefix(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "audit", 4)
	mustCreate(t, e, "orders", "billing", 4)
	e.ticks(1)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, n := range []int{6, 8} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = scaleTo(e, "orders", n)
		}()
	}
	wg.Wait()
	okCount := 0
	for _, err := range errs {
		if err == nil {
			okCount++
			continue
		}
		require.True(t, coord.IsCode(err, coord.CodeActiveMigrationExists), "%v", err)
	}
	require.Equal(t, 1, okCount, "exactly one scale wins")

	_, err := e.client.ScaleGroup(ctx, "orders", "audit", coord.ScaleRequest{TargetShardCount: 10, RequestedBy: "t", Reason: "t"})
	require.True(t, coord.IsCode(err, coord.CodeActiveMigrationExists), "%v", err)
	e.ticks(3)
	_, err = scaleTo(e, "orders", 10)
	require.NoError(t, err, "a scale is accepted again once every migration completed")
}

func TestProvisioningFailureThenResume(t *testing.T) {
	// One attempt only: a client retry of the 503 would meet the 409 of the
	// earlier group that is already ACTIVE (coordinator.md §4).
	e := newEnv(t, nil, coord.WithRetry(1, 0))
	mustCreate(t, e, "orders", "audit", 4)
	mustCreate(t, e, "orders", "billing", 4)
	e.ticks(1)
	e.sim.FailNextProvisioning("orders", "billing")
	_, err := scaleTo(e, "orders", 8)
	require.True(t, coord.IsCode(err, coord.CodeProvisioningFailed), "%v", err)
	require.Equal(t, 8, routingCount(t, e, "orders", "audit"), "earlier groups went ACTIVE")
	require.Equal(t, 4, routingCount(t, e, "orders", "billing"), "the failing group stays PREPARING")
	ml, err := e.client.Migrations(context.Background(), "orders", "billing")
	require.NoError(t, err)
	require.Len(t, ml.Migrations, 1)
	require.Equal(t, coord.MigrationPreparing, ml.Migrations[0].State)
	preparing := ml.Migrations[0].ReshardingID

	_, err = scaleTo(e, "orders", 8)
	require.True(t, coord.IsCode(err, coord.CodeActiveMigrationExists), "audit is still ACTIVE: %v", err)
	e.ticks(3)
	_, err = scaleTo(e, "orders", 6)
	require.True(t, coord.IsCode(err, coord.CodeActiveMigrationExists), "only the same target resumes: %v", err)
	res, err := scaleTo(e, "orders", 8)
	require.NoError(t, err)
	require.Equal(t, []string{"audit", "billing"}, res.AffectedConsumerGroups)
	require.Equal(t, coord.NoopReshardingID, res.Migrations[0].ReshardingID, "audit is already at 8")
	require.Equal(t, preparing, res.Migrations[1].ReshardingID, "billing's PREPARING migration is resumed")
	require.Equal(t, coord.MigrationActive, res.Migrations[1].State)
	require.Equal(t, 8, routingCount(t, e, "orders", "billing"))
}

func TestSameCountScaleIsUnstoredNoop(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 4)
	res, err := scaleTo(e, "orders", 4)
	require.NoError(t, err)
	m := res.Migrations[0]
	require.Equal(t, coord.NoopReshardingID, m.ReshardingID)
	require.Equal(t, coord.MigrationDeprecated, m.State)
	require.Equal(t, 4, m.FromShardCount)
	_, err = e.client.Migration(context.Background(), "orders", "billing", coord.NoopReshardingID)
	require.True(t, coord.IsNotFound(err), "the noop migration is not stored: %v", err)
}
