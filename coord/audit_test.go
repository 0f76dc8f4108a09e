package coord_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

// rawCall sends one request the typed client cannot (empty or blank bodies),
// through the contract-checked transport.
func rawCall(t *testing.T, e *env, user, pass, method, path, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.SetBasicAuth(user, pass)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Transport: e.ct, Timeout: 5 * time.Second}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// lastAuditJSON is the last audit event as the coordinator would write it.
func lastAuditJSON(t *testing.T, e *env) map[string]any {
	t.Helper()
	events := e.sim.Audit()
	require.NotEmpty(t, events)
	b, err := json.Marshal(events[len(events)-1])
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// TestAuditValues pins the audit event's values to AuditLogInterceptor.kt
// (docs/coordinator.md §3 "Value details").
func TestAuditValues(t *testing.T) {
	ctx := context.Background()
	users := []coordsim.Option{coordsim.WithUsers(
		coordsim.User{Name: "tf", Password: "tf-pw", Roles: []coordsim.Role{coordsim.RoleWrite, coordsim.RoleRead}},
		coordsim.User{Name: "viewer", Password: "viewer-pw", Roles: []coordsim.Role{coordsim.RoleRead, coordsim.RoleMonitor}},
	)}
	tests := []struct {
		name string
		// setup runs first (its events are not checked), act makes the audited call.
		setup func(t *testing.T, e *env)
		act   func(t *testing.T, e *env)
		want  map[string]any
	}{
		{name: "create group: summary values are strings, route is the Spring pattern, no reason is null",
			act: func(t *testing.T, e *env) {
				_, err := e.client.CreateGroup(ctx, "orders", "billing", coord.CreateRequest{InitialShardCount: 4, RequestedBy: "alice"})
				require.NoError(t, err)
			},
			want: map[string]any{"action": "CREATE_GROUP", "outcome": "SUCCESS", "status": 201.0,
				"route":          "/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}",
				"requestSummary": map[string]any{"initialShardCount": "4"},
				"streamPrefix":   "orders", "consumerGroup": "billing", "requestedBy": "alice", "reason": nil,
				"reshardingId": nil, "queryString": nil, "principal": "tf", "roles": []any{"READ", "WRITE"}}},
		{name: "stream scale: no consumer group, no resharding id",
			setup: func(t *testing.T, e *env) { mustCreate(t, e, "orders", "billing", 4) },
			act: func(t *testing.T, e *env) {
				_, err := scaleTo(e, "orders", 8)
				require.NoError(t, err)
			},
			want: map[string]any{"action": "SCALE_STREAM", "outcome": "SUCCESS", "status": 202.0,
				"route":          "/coord/v1/streams/{streamPrefix}/scale",
				"requestSummary": map[string]any{"targetShardCount": "8"},
				"consumerGroup":  nil, "reshardingId": nil, "requestedBy": "test", "reason": "test"}},
		{name: "group scale: no resharding id either",
			setup: func(t *testing.T, e *env) { mustCreate(t, e, "orders", "billing", 4) },
			act: func(t *testing.T, e *env) {
				_, err := e.client.ScaleGroup(ctx, "orders", "billing", coord.ScaleRequest{TargetShardCount: 6, RequestedBy: "a", Reason: "b"})
				require.NoError(t, err)
			},
			want: map[string]any{"action": "SCALE_GROUP", "reshardingId": nil,
				"route": "/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/scale"}},
		{name: "rollback carries the resharding id of its path",
			setup: func(t *testing.T, e *env) {
				mustCreate(t, e, "orders", "billing", 4)
				_, err := e.client.ScaleGroup(ctx, "orders", "billing", coord.ScaleRequest{TargetShardCount: 6, RequestedBy: "a", Reason: "b"})
				require.NoError(t, err)
			},
			act: func(t *testing.T, e *env) {
				ml, err := e.client.Migrations(ctx, "orders", "billing")
				require.NoError(t, err)
				_, err = e.client.Rollback(ctx, "orders", "billing", *ml.ActiveReshardingID, coord.RollbackRequest{RequestedBy: "a", Reason: "undo"})
				require.NoError(t, err)
			},
			want: map[string]any{"action": "ROLLBACK_MIGRATION", "status": 202.0,
				"route": "/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/migrations/{reshardingId}/rollback"}},
		{name: "delete: force is the string false",
			setup: func(t *testing.T, e *env) { mustCreate(t, e, "orders", "billing", 4) },
			act: func(t *testing.T, e *env) {
				_, err := e.client.DeleteGroup(ctx, "orders", "billing", coord.DeleteRequest{RequestedBy: "a", Reason: "gone"})
				require.True(t, coord.IsCode(err, coord.CodeGroupHasActiveMembers), "%v", err)
			},
			want: map[string]any{"action": "DELETE_GROUP", "outcome": "FAILED", "status": 409.0,
				"requestSummary": map[string]any{"force": "false"}, "reason": "gone"}},
		{name: "empty body: no body hash, no summary",
			act: func(t *testing.T, e *env) {
				require.Equal(t, 400, rawCall(t, e, "tf", "tf-pw", http.MethodPost, "/coord/v1/streams/orders/groups/billing", ""))
			},
			want: map[string]any{"action": "CREATE_GROUP", "outcome": "FAILED", "status": 400.0,
				"requestBodySha256": nil, "requestSummary": map[string]any{}, "requestedBy": nil}},
		{name: "blank requestedBy and reason are null",
			act: func(t *testing.T, e *env) {
				require.Equal(t, 400, rawCall(t, e, "tf", "tf-pw", http.MethodPost, "/coord/v1/streams/orders/groups/billing",
					`{"initialShardCount":2,"requestedBy":"  ","reason":" "}`))
			},
			want: map[string]any{"outcome": "FAILED", "requestedBy": nil, "reason": nil,
				"requestSummary": map[string]any{"initialShardCount": "2"}}},
		{name: "unauthenticated: no principal, no roles, the body is never read",
			act: func(t *testing.T, e *env) {
				require.Equal(t, 401, rawCall(t, e, "tf", "wrong-pw", http.MethodPost, "/coord/v1/streams/orders/scale",
					`{"targetShardCount":2,"requestedBy":"a","reason":"b"}`))
			},
			want: map[string]any{"action": "SCALE_STREAM", "outcome": "UNAUTHORIZED", "status": 401.0, "principal": nil,
				"roles": []any{}, "requestedBy": nil, "requestBodySha256": nil, "requestSummary": map[string]any{}}},
		{name: "forbidden: principal and sorted roles",
			act: func(t *testing.T, e *env) {
				require.Equal(t, 403, rawCall(t, e, "viewer", "viewer-pw", http.MethodPost, "/coord/v1/streams/orders/scale",
					`{"targetShardCount":2,"requestedBy":"a","reason":"b"}`))
			},
			want: map[string]any{"outcome": "FORBIDDEN", "status": 403.0, "principal": "viewer",
				"roles": []any{"MONITOR", "READ"}, "requestedBy": nil}},
		{name: "503 the service resolved itself is FAILED, not ERROR",
			setup: func(t *testing.T, e *env) {
				mustCreate(t, e, "orders", "billing", 4)
				e.sim.FailNextProvisioning("orders", "billing")
			},
			act: func(t *testing.T, e *env) {
				_, err := e.newClient(t, coord.WithBasicAuth("tf", "tf-pw"), coord.WithRetry(1, 0)).ScaleStream(ctx, "orders",
					coord.ScaleRequest{TargetShardCount: 8, RequestedBy: "a", Reason: "b"})
				require.True(t, coord.IsCode(err, coord.CodeProvisioningFailed), "%v", err)
			},
			want: map[string]any{"outcome": "FAILED", "status": 503.0, "requestedBy": "a", "reshardingId": nil}},
		{name: "429 from the rate limiter: refused before the body is read",
			setup: func(t *testing.T, e *env) { e.sim.RateLimitNext(1, time.Second) },
			act: func(t *testing.T, e *env) {
				_, err := e.newClient(t, coord.WithBasicAuth("tf", "tf-pw"), coord.WithRetry(1, 0)).CreateGroup(ctx, "orders", "billing",
					coord.CreateRequest{InitialShardCount: 4, RequestedBy: "a"})
				require.True(t, coord.IsCode(err, coord.CodeRateLimitExceeded), "%v", err)
			},
			want: map[string]any{"outcome": "FAILED", "status": 429.0, "principal": "tf", "requestedBy": nil,
				"requestBodySha256": nil, "requestSummary": map[string]any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, users, coord.WithBasicAuth("tf", "tf-pw"))
			if tt.setup != nil {
				tt.setup(t, e)
			}
			tt.act(t, e)
			got := lastAuditJSON(t, e)
			for k, want := range tt.want {
				require.Contains(t, got, k)
				require.Equal(t, want, got[k], "audit field %s", k)
			}
			if got["requestBodySha256"] != nil {
				require.Regexp(t, `^[0-9a-f]{64}$`, got["requestBodySha256"])
			}
		})
	}
}

// The JSON form round-trips into the Go event: null reads back as "".
func TestAuditEventJSONRoundTrip(t *testing.T) {
	e := newEnv(t, nil)
	_, err := scaleTo(e, "nope", 2)
	require.True(t, coord.IsCode(err, coord.CodeStreamNotFound), "%v", err)
	ev := e.sim.Audit()[0]
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	var back coordsim.AuditEvent
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, ev, back)
	require.Equal(t, "", back.ConsumerGroup)
	require.Equal(t, map[string]string{"targetShardCount": "2"}, back.RequestSummary)
}
