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
			in := inputOf(Request{ChangeSet: &planparse.ChangeSet{Desired: tt.desired}})
			want := ast.MustParseTerm(tt.want)
			require.True(t, in.Get(ast.StringTerm(inputDesired)).Equal(want), "got %v", in.Get(ast.StringTerm(inputDesired)))
		})
	}
}

func TestInputLiveIndexes(t *testing.T) {
	live := map[string]LiveStream{
		"http://c:8080 orders": {Coordinator: "http://c:8080", StreamPrefix: "orders", Groups: []LiveGroup{
			{ConsumerGroup: "billing", ShardCount: 4, State: "STABLE", LiveMembers: 3, MetadataVersion: 1 << 40},
			{ConsumerGroup: "audit", ShardCount: 6, State: "MIGRATING", ActiveMigrationID: "m1", MigrationState: "ACTIVE"},
		}},
		// A stream without its coordinator field gets it from its key.
		"http://d payments": {StreamPrefix: "payments"},
	}
	in := inputOf(Request{ChangeSet: &planparse.ChangeSet{}, Live: live})
	want := ast.MustParseTerm(`{
		"http://c:8080 orders": {"coordinator": "http://c:8080", "stream_prefix": "orders", "metadata_version_regressed": false, "max_shard_count": 6,
			"shard_counts": {"billing": 4, "audit": 6},
			"groups": [
				{"consumer_group": "billing", "shard_count": 4, "state": "STABLE", "active_migration_id": "",
				 "migration_state": "", "live_members": 3, "metadata_version": 1099511627776},
				{"consumer_group": "audit", "shard_count": 6, "state": "MIGRATING", "active_migration_id": "m1",
				 "migration_state": "ACTIVE", "live_members": 0, "metadata_version": 0}]},
		"http://d payments": {"coordinator": "http://d", "stream_prefix": "payments", "metadata_version_regressed": false, "shard_counts": {}, "groups": []}
	}`)
	got := in.Get(ast.StringTerm(inputLive))
	require.True(t, got.Equal(want), "got %v", got)
}

func TestInputChangesByAction(t *testing.T) {
	scale := scaleChange("orders", "billing", 4, 6)
	del := moduleChange("orders", "audit", planparse.ActionUnmanage, intp(4), nil)
	noop := moduleChange("payments", "billing", planparse.ActionNoop, intp(2), intp(2))
	in := inputOf(Request{ChangeSet: changeSet(scale, noop, del)})

	changes := in.Get(ast.StringTerm(inputChanges)).Value.(*ast.Array)
	require.Equal(t, 2, changes.Len(), "noops are left out")
	byAction := in.Get(ast.StringTerm(inputChangesByAction)).Value.(ast.Object)
	keys := []string{}
	for _, k := range byAction.Keys() {
		keys = append(keys, string(k.Value.(ast.String)))
	}
	require.ElementsMatch(t, []string{"create", "scale", "delete", "unmanage", "update", "move"}, keys)
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

// inputOf is the input document the engine evaluates for req.
func inputOf(req Request) ast.Object {
	return buildInput(req, judge(req), true).(ast.Object)
}

func TestInputChangeFields(t *testing.T) {
	c := onCoordinator(tainted("orders", "billing", 5, 5), coordA)
	c.MovedFrom, c.Unknown, c.Missing, c.Importing = "module.old", []string{planparse.FieldCoordinatorURL}, []string{"x"}, true
	c.InvalidShardCount = "4.5"
	in := inputOf(Request{ChangeSet: changeSet(c)})
	got := in.Get(ast.StringTerm(inputChanges)).Value.(*ast.Array).Elem(0)
	want := ast.MustParseTerm(`{
		"address": "module.orders_billing.terraform_data.stream_group", "kind": "stream_group_module",
		"stream_prefix": "orders", "consumer_group": "billing",
		"coordinator_url": "http://coordinator-a:8080", "coordinator": "http://coordinator-a:8080",
		"stream": "http://coordinator-a:8080 orders", "action": "scale",
		"shards_before": null, "shards_after": 5, "prior_shards": 5, "tainted": true, "moved_from": "module.old", "importing": true, "managed_by": "",
		"unknown": ["coordinator_base_url"], "missing": ["x"], "invalid_shard_count": "4.5",
		"action_reason": "replace_because_tainted", "terraform_actions": ["delete", "create"]
	}`)
	require.True(t, got.Equal(want), "got %v", got)
}

func TestInputIndexesAndPlanKeys(t *testing.T) {
	scaleA := onCoordinator(scaleChange("orders", "billing", 4, 6), coordA)
	scaleB := onCoordinator(scaleChange("orders", "audit", 4, 6), coordB)
	createA := onCoordinator(moduleChange("orders", "search", planparse.ActionCreate, nil, intp(4)), coordA)
	drifted := onCoordinator(moduleChange("payments", "ledger", planparse.ActionNoop, intp(2), intp(2)), coordA)
	quiet := onCoordinator(moduleChange("payments", "audit", planparse.ActionNoop, intp(2), intp(2)), coordA)
	cs := changeSet(scaleA, drifted, scaleB, quiet, createA)
	cs.Incomplete = true
	cs.OtherChanges = []planparse.OtherChange{{Address: "aws_s3_bucket.logs", Type: "aws_s3_bucket", Actions: []string{"delete"}, ActionReason: "delete_because_no_resource_config", Fingerprint: "secret-free"}}
	live := liveOn(coordA, "payments", liveGroup("ledger", 3), liveGroup("audit", 2))
	in := inputOf(Request{ChangeSet: cs, Live: live})

	changes := in.Get(ast.StringTerm(inputChanges)).Value.(*ast.Array)
	require.Equal(t, 3, changes.Len(), "noops are left out")
	byStream := in.Get(ast.StringTerm(inputChangesByStream)).Value.(ast.Object)
	require.Equal(t, 2, byStream.Len())
	streamA := byStream.Get(ast.StringTerm(scaleA.Stream)).Value.(*ast.Array)
	require.Equal(t, 2, streamA.Len())
	require.Same(t, changes.Elem(0), streamA.Elem(0), "the same terms as in input.changes")
	require.Same(t, changes.Elem(2), streamA.Elem(1))
	require.Same(t, changes.Elem(1), byStream.Get(ast.StringTerm(scaleB.Stream)).Value.(*ast.Array).Elem(0))

	drift := in.Get(ast.StringTerm(inputDrift)).Value.(*ast.Array)
	require.Equal(t, 1, drift.Len())
	require.Equal(t, ast.StringTerm("module.payments_ledger.terraform_data.stream_group"), drift.Elem(0).Get(ast.StringTerm("address")))
	require.Equal(t, ast.InternedTerm(3), drift.Elem(0).Get(ast.StringTerm("shards_before")), "the live count")

	others := in.Get(ast.StringTerm(inputOtherChanges))
	wantOthers := ast.MustParseTerm(`[{"address": "aws_s3_bucket.logs", "type": "aws_s3_bucket", "actions": ["delete"], "action_reason": "delete_because_no_resource_config"}]`)
	require.True(t, others.Equal(wantOthers), "got %v", others)
	require.Equal(t, ast.BooleanTerm(true), in.Get(ast.StringTerm(inputIncomplete)))

	streams := in.Get(ast.StringTerm(inputStreams))
	wantStreams := ast.MustParseTerm(`{
		"http://coordinator-a:8080 orders": {"coordinator": "http://coordinator-a:8080", "stream_prefix": "orders", "name": "orders on http://coordinator-a:8080"},
		"http://coordinator-b:8080 orders": {"coordinator": "http://coordinator-b:8080", "stream_prefix": "orders", "name": "orders on http://coordinator-b:8080"},
		"http://coordinator-a:8080 payments": {"coordinator": "http://coordinator-a:8080", "stream_prefix": "payments", "name": "payments"}
	}`)
	require.True(t, streams.Equal(wantStreams), "got %v", streams)
}

func TestInputDesiredByStream(t *testing.T) {
	desired := []planparse.Desired{
		{Address: "a", StreamPrefix: "orders", Coordinator: coordA, Stream: planparse.StreamKey(coordA, "orders"), ShardCount: 4},
		{Address: "b", StreamPrefix: "orders", Coordinator: coordB, Stream: planparse.StreamKey(coordB, "orders"), ShardCount: 8},
		// Without a stream key (an older change set) it is derived.
		{Address: "c", StreamPrefix: "orders", Coordinator: coordA, ShardCount: 4},
	}
	in := inputOf(Request{ChangeSet: &planparse.ChangeSet{Desired: desired}})
	want := ast.MustParseTerm(`{"http://coordinator-a:8080 orders": {"4": ["a", "c"]}, "http://coordinator-b:8080 orders": {"8": ["b"]}}`)
	got := in.Get(ast.StringTerm(inputDesired))
	require.True(t, got.Equal(want), "got %v", got)
}
