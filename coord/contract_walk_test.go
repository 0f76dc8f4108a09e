package coord_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

// TestContractWalk drives every simulated endpoint, success and error paths,
// through the contract-checked transport.
func TestContractWalk(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client
	ctx := context.Background()
	create := coord.CreateRequest{InitialShardCount: 4, RequestedBy: "alice", Reason: "bootstrap"}

	created, err := c.CreateGroup(ctx, "orders", "billing", create)
	require.NoError(t, err)
	require.Equal(t, 4, created.ShardCount)
	_, err = c.CreateGroup(ctx, "orders", "billing", create)
	require.True(t, coord.IsCode(err, coord.CodeGroupAlreadyExists), "%v", err)
	_, err = c.CreateGroup(ctx, "orders", "audit", coord.CreateRequest{InitialShardCount: 4})
	require.True(t, coord.IsCode(err, coord.CodeInvalidRequest), "blank requestedBy: %v", err)

	sc, err := c.CreateStream(ctx, "payments", coord.CreateRequest{RequestedBy: "alice"})
	require.NoError(t, err)
	require.Equal(t, coordsim.DefaultInitialShardCount, sc.ShardCount)
	_, err = c.CreateStream(ctx, "orders", create)
	require.True(t, coord.IsCode(err, coord.CodeStreamPrefixExists), "%v", err)

	e.ticks(1)
	g, err := c.Group(ctx, "orders", "billing")
	require.NoError(t, err)
	require.Equal(t, coord.GroupStable, g.State)
	_, err = c.Group(ctx, "orders", "nope")
	require.True(t, coord.IsNotFound(err))

	r, err := c.ProducerRouting(ctx, "orders", "billing")
	require.NoError(t, err)
	require.Len(t, r.Shards, 4)
	_, err = c.ProducerRouting(ctx, "orders", "nope")
	require.True(t, coord.IsNotFound(err))

	scale, err := c.ScaleStream(ctx, "orders", coord.ScaleRequest{TargetShardCount: 6, RequestedBy: "alice", Reason: "load"})
	require.NoError(t, err)
	id := scale.Migrations[0].ReshardingID
	_, err = c.ScaleStream(ctx, "nope", coord.ScaleRequest{TargetShardCount: 6, RequestedBy: "alice", Reason: "load"})
	require.True(t, coord.IsCode(err, coord.CodeStreamNotFound), "%v", err)
	_, err = c.ScaleStream(ctx, "orders", coord.ScaleRequest{TargetShardCount: 8, RequestedBy: "alice", Reason: "load"})
	require.True(t, coord.IsCode(err, coord.CodeActiveMigrationExists), "%v", err)
	_, err = c.ScaleStream(ctx, "orders", coord.ScaleRequest{TargetShardCount: -1, RequestedBy: "alice", Reason: "load"})
	require.True(t, coord.IsCode(err, coord.CodeInvalidRequest), "%v", err)

	m, err := c.Migration(ctx, "orders", "billing", id)
	require.NoError(t, err)
	require.Equal(t, coord.MigrationActive, m.State)
	_, err = c.Migration(ctx, "orders", "billing", "reshard-nope")
	require.True(t, coord.IsCode(err, coord.CodeMigrationNotFound), "%v", err)
	ml, err := c.Migrations(ctx, "orders", "billing")
	require.NoError(t, err)
	require.NotNil(t, ml.ActiveReshardingID)

	for _, read := range []func() error{
		func() error { _, err := c.Assignments(ctx, "orders", "billing"); return err },
		func() error { _, err := c.Members(ctx, "orders", "billing"); return err },
		func() error { _, err := c.Groups(ctx); return err },
		func() error { _, err := c.Health(ctx); return err },
		func() error { return getJSON(t, e, "/coord/v1/monitoring/streams/orders/groups/billing") },
		func() error { return getJSON(t, e, "/coord/v1/monitoring/streams/orders/groups/billing/consumption") },
		func() error { return getJSON(t, e, "/coord/v1/monitoring/streams/orders/groups/billing/offsets") },
	} {
		require.NoError(t, read())
	}

	e.ticks(3)
	ml, err = c.Migrations(ctx, "orders", "billing")
	require.NoError(t, err)
	require.Nil(t, ml.ActiveReshardingID, "null activeReshardingId must validate too")
	_, err = c.Rollback(ctx, "orders", "billing", id, coord.RollbackRequest{RequestedBy: "alice", Reason: "undo"})
	require.True(t, coord.IsCode(err, coord.CodeRollbackNotAllowed), "%v", err)

	noop, err := c.ScaleGroup(ctx, "orders", "billing", coord.ScaleRequest{TargetShardCount: 6, RequestedBy: "alice", Reason: "same"})
	require.NoError(t, err)
	require.Equal(t, coord.NoopReshardingID, noop.ReshardingID)

	_, err = c.DeleteGroup(ctx, "orders", "billing", coord.DeleteRequest{RequestedBy: "alice", Reason: "gone"})
	require.True(t, coord.IsCode(err, coord.CodeGroupHasActiveMembers), "%v", err)
	_, err = c.DeleteGroup(ctx, "orders", "billing", coord.DeleteRequest{RequestedBy: "alice", Reason: "gone", Force: true})
	require.NoError(t, err)
	_, err = c.DeleteGroup(ctx, "orders", "billing", coord.DeleteRequest{RequestedBy: "alice", Reason: "gone", Force: true})
	require.True(t, coord.IsNotFound(err))

	anon := e.newClient(t)
	_, err = anon.Groups(ctx)
	require.True(t, coord.IsCode(err, coord.CodeUnauthorized), "%v", err)

	status, lr := e.login(t, "admin", "password")
	require.Equal(t, http.StatusOK, status)
	_, err = e.bearerClient(t, lr.AccessToken).Groups(ctx)
	require.NoError(t, err)
	require.Greater(t, e.ct.checked, 30)
}

// getJSON reads an endpoint the client has no method for, through the contract transport.
func getJSON(t *testing.T, e *env, path string) error {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, bytes.NewReader(nil))
	require.NoError(t, err)
	req.SetBasicAuth("admin", "password")
	resp, err := (&http.Client{Transport: e.ct, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, path)
	return nil
}
