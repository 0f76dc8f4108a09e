package policy

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

func TestInputDesiredGrouping(t *testing.T) {
	tests := []struct {
		name    string
		desired []planparse.Desired
		want    string
	}{
		{name: "none", want: `{}`},
		{
			name: "one prefix, one count",
			desired: []planparse.Desired{
				{Address: "a", StreamPrefix: "orders", ShardCount: 4},
				{Address: "b", StreamPrefix: "orders", ShardCount: 4},
			},
			want: `{"orders": {"4": ["a", "b"]}}`,
		},
		{
			name: "prefixes interleaved, counts disagreeing",
			desired: []planparse.Desired{
				{Address: "a", StreamPrefix: "orders", ShardCount: 4},
				{Address: "b", StreamPrefix: "payments", ShardCount: 2},
				{Address: "c", StreamPrefix: "orders", ShardCount: 8},
				{Address: "d", StreamPrefix: "payments", ShardCount: 2},
				{Address: "e", StreamPrefix: "orders", ShardCount: 4},
			},
			want: `{"orders": {"4": ["a", "e"], "8": ["c"]}, "payments": {"2": ["b", "d"]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := buildInput(Request{ChangeSet: &planparse.ChangeSet{Desired: tt.desired}}).(ast.Object)
			want := ast.MustParseTerm(tt.want)
			require.True(t, in.Get(ast.StringTerm(inputDesired)).Equal(want), "got %v", in.Get(ast.StringTerm(inputDesired)))
		})
	}
}

func TestInputLiveIndexes(t *testing.T) {
	live := map[string]LiveStream{
		"orders": {StreamPrefix: "orders", Groups: []LiveGroup{
			{ConsumerGroup: "billing", ShardCount: 4, State: "STABLE", LiveMembers: 3, MetadataVersion: 1 << 40},
			{ConsumerGroup: "audit", ShardCount: 6, State: "MIGRATING", ActiveMigrationID: "m1", MigrationState: "ACTIVE"},
		}},
		"payments": {StreamPrefix: "payments"},
	}
	in := buildInput(Request{ChangeSet: &planparse.ChangeSet{}, Live: live}).(ast.Object)
	want := ast.MustParseTerm(`{
		"orders": {"stream_prefix": "orders", "metadata_version_regressed": false, "max_shard_count": 6,
			"shard_counts": {"billing": 4, "audit": 6},
			"groups": [
				{"consumer_group": "billing", "shard_count": 4, "state": "STABLE", "active_migration_id": "",
				 "migration_state": "", "live_members": 3, "metadata_version": 1099511627776},
				{"consumer_group": "audit", "shard_count": 6, "state": "MIGRATING", "active_migration_id": "m1",
				 "migration_state": "ACTIVE", "live_members": 0, "metadata_version": 0}]},
		"payments": {"stream_prefix": "payments", "metadata_version_regressed": false, "shard_counts": {}, "groups": []}
	}`)
	got := in.Get(ast.StringTerm(inputLive))
	require.True(t, got.Equal(want), "got %v", got)
}

func TestInputChangesByAction(t *testing.T) {
	scale := scaleChange("orders", "billing", 4, 6)
	del := moduleChange("orders", "audit", planparse.ActionUnmanage, intp(4), nil)
	noop := moduleChange("payments", "billing", planparse.ActionNoop, intp(2), intp(2))
	in := buildInput(Request{ChangeSet: changeSet(scale, noop, del)}).(ast.Object)

	changes := in.Get(ast.StringTerm(inputChanges)).Value.(*ast.Array)
	require.Equal(t, 2, changes.Len(), "noops are left out")
	byAction := in.Get(ast.StringTerm(inputChangesByAction)).Value.(ast.Object)
	keys := []string{}
	for _, k := range byAction.Keys() {
		keys = append(keys, string(k.Value.(ast.String)))
	}
	require.ElementsMatch(t, []string{"create", "scale", "delete", "unmanage", "update"}, keys)
	tests := []struct {
		action string
		want   []*ast.Term
	}{
		{"scale", []*ast.Term{changes.Elem(0)}},
		{"unmanage", []*ast.Term{changes.Elem(1)}},
		{"delete", nil},
		{"create", nil},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			got := byAction.Get(ast.StringTerm(tt.action)).Value.(*ast.Array)
			require.Equal(t, len(tt.want), got.Len())
			for i, w := range tt.want {
				require.Same(t, w, got.Elem(i), "the same term as in input.changes")
			}
		})
	}
}
