package planparse_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// planJSON wraps resource_changes entries into a minimal plan.
func planJSON(entries ...string) []byte {
	return []byte(`{"format_version":"1.2","terraform_version":"1.5.7","resource_changes":[` + strings.Join(entries, ",") + `]}`)
}

// entry is one resource_changes entry the way terraform writes it.
func entry(address, typ, change string, extra ...string) string {
	name := address[strings.LastIndex(address, ".")+1:]
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	s := `{"address":` + quote(address) + `,"mode":"managed","type":"` + typ + `","name":"` + name +
		`","provider_name":"registry.terraform.io/acme/redisstreamcoordinator","change":` + change
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

const (
	groupType = "redisstreamcoordinator_group"
	countType = "redisstreamcoordinator_group_shard_count"
	orders4   = `{"stream_prefix":"orders","consumer_group":"billing","shard_count":4,"id":"orders/billing"}`
	orders8   = `{"stream_prefix":"orders","consumer_group":"billing","shard_count":8,"id":"orders/billing"}`
	renamed8  = `{"stream_prefix":"orders-v2","consumer_group":"billing","shard_count":8,"id":"orders-v2/billing"}`
)

func change(actions, before, after string) string {
	return `{"actions":` + actions + `,"before":` + before + `,"after":` + after +
		`,"after_unknown":{},"before_sensitive":{},"after_sensitive":{}}`
}

func providerChange(address string, k planparse.Kind, a planparse.Action, prefix string, before, after *int, actions ...string) planparse.Change {
	return planparse.Change{Address: address, Kind: k, StreamPrefix: prefix, ConsumerGroup: "billing", Stream: prefix,
		Action: a, ShardsBefore: before, ShardsAfter: after, PriorShards: before, TerraformActions: actions}
}

func TestParseProviderResources(t *testing.T) {
	const g, sc = "redisstreamcoordinator_group.orders", "module.x.redisstreamcoordinator_group_shard_count.orders"
	type (
		C = planparse.Change
		D = planparse.Desired
	)
	tests := []struct {
		name        string
		entries     []string
		want        []C
		wantDesired []D
	}{
		{
			name:        "group create",
			entries:     []string{entry(g, groupType, change(`["create"]`, `null`, orders4))},
			want:        []C{providerChange(g, planparse.KindGroup, planparse.ActionCreate, "orders", nil, ptr(4), "create")},
			wantDesired: []D{{Address: g, StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 4}},
		},
		{
			name:    "group delete is a real delete",
			entries: []string{entry(g, groupType, change(`["delete"]`, orders4, `null`))},
			want:    []C{providerChange(g, planparse.KindGroup, planparse.ActionDelete, "orders", ptr(4), nil, "delete")},
		},
		{
			name:    "group replace destroys the metadata",
			entries: []string{entry(g, groupType, change(`["delete","create"]`, orders4, orders8))},
			want: []C{
				providerChange(g, planparse.KindGroup, planparse.ActionDelete, "orders", ptr(4), nil, "delete", "create"),
				providerChange(g, planparse.KindGroup, planparse.ActionCreate, "orders", nil, ptr(8), "delete", "create"),
			},
			wantDesired: []D{{Address: g, StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 8}},
		},
		{
			name:        "group update of the count is a scale",
			entries:     []string{entry(g, groupType, change(`["update"]`, orders4, orders8))},
			want:        []C{providerChange(g, planparse.KindGroup, planparse.ActionScale, "orders", ptr(4), ptr(8), "update")},
			wantDesired: []D{{Address: g, StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 8}},
		},
		{
			name: "group update of something else",
			entries: []string{entry(g, groupType, change(`["update"]`, orders4,
				`{"stream_prefix":"orders","consumer_group":"billing","shard_count":4,"id":"orders/billing","labels":{"a":"b"}}`))},
			want:        []C{providerChange(g, planparse.KindGroup, planparse.ActionUpdate, "orders", ptr(4), ptr(4), "update")},
			wantDesired: []D{{Address: g, StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 4}},
		},
		{
			name:    "group update of the identity",
			entries: []string{entry(g, groupType, change(`["update"]`, orders4, renamed8))},
			want: []C{
				providerChange(g, planparse.KindGroup, planparse.ActionDelete, "orders", ptr(4), nil, "update"),
				providerChange(g, planparse.KindGroup, planparse.ActionCreate, "orders-v2", nil, ptr(8), "update"),
			},
			wantDesired: []D{{Address: g, StreamPrefix: "orders-v2", ConsumerGroup: "billing", Stream: "orders-v2", ShardCount: 8}},
		},
		{
			name: "group update without a count on either side",
			entries: []string{entry(g, groupType, change(`["update"]`,
				`{"stream_prefix":"orders","consumer_group":"billing","note":"a"}`, `{"stream_prefix":"orders","consumer_group":"billing","note":"b"}`))},
			// The count cannot be read: a scale that cannot be judged, never a harmless update.
			want: []C{func() C {
				c := providerChange(g, planparse.KindGroup, planparse.ActionScale, "orders", nil, nil, "update")
				c.Missing = []string{planparse.FieldShardCount}
				return c
			}()},
		},
		{
			name:        "group no-op",
			entries:     []string{entry(g, groupType, change(`["no-op"]`, orders4, orders4))},
			want:        []C{providerChange(g, planparse.KindGroup, planparse.ActionNoop, "orders", ptr(4), ptr(4), "no-op")},
			wantDesired: []D{{Address: g, StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 4}},
		},
		{
			name:    "group forget",
			entries: []string{entry(g, groupType, change(`["forget"]`, orders4, `null`))},
			want:    []C{providerChange(g, planparse.KindGroup, planparse.ActionUnmanage, "orders", ptr(4), nil, "forget")},
		},
		{
			name: "group update to an unknown count",
			entries: []string{entry(g, groupType, `{"actions":["update"],"before":`+orders4+
				`,"after":{"stream_prefix":"orders","consumer_group":"billing","id":"orders/billing"},"after_unknown":{"shard_count":true}}`)},
			want: []C{func() C {
				c := providerChange(g, planparse.KindGroup, planparse.ActionScale, "orders", ptr(4), nil, "update")
				c.Unknown = []string{planparse.FieldShardCount}
				return c
			}()},
		},
		{
			name:        "shard count create applies a count",
			entries:     []string{entry(sc, countType, change(`["create"]`, `null`, orders8))},
			want:        []C{providerChange(sc, planparse.KindShardCount, planparse.ActionScale, "orders", nil, ptr(8), "create")},
			wantDesired: []D{{Address: sc, StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 8}},
		},
		{
			name:        "shard count update",
			entries:     []string{entry(sc, countType, change(`["update"]`, orders4, orders8))},
			want:        []C{providerChange(sc, planparse.KindShardCount, planparse.ActionScale, "orders", ptr(4), ptr(8), "update")},
			wantDesired: []D{{Address: sc, StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 8}},
		},
		{
			name:        "shard count replace",
			entries:     []string{entry(sc, countType, change(`["create","delete"]`, orders4, orders8))},
			want:        []C{providerChange(sc, planparse.KindShardCount, planparse.ActionScale, "orders", ptr(4), ptr(8), "create", "delete")},
			wantDesired: []D{{Address: sc, StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 8}},
		},
		{
			name:    "shard count delete keeps the count",
			entries: []string{entry(sc, countType, change(`["delete"]`, orders4, `null`))},
			want:    []C{providerChange(sc, planparse.KindShardCount, planparse.ActionUnmanage, "orders", ptr(4), nil, "delete")},
		},
		{
			name:        "shard count no-op",
			entries:     []string{entry(sc, countType, change(`["no-op"]`, orders4, orders4))},
			want:        []C{providerChange(sc, planparse.KindShardCount, planparse.ActionNoop, "orders", ptr(4), ptr(4), "no-op")},
			wantDesired: []D{{Address: sc, StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 4}},
		},
		{
			name:    "shard count moved to another group",
			entries: []string{entry(sc, countType, change(`["delete","create"]`, orders4, renamed8))},
			want: []C{
				providerChange(sc, planparse.KindShardCount, planparse.ActionScale, "orders-v2", nil, ptr(8), "delete", "create"),
				providerChange(sc, planparse.KindShardCount, planparse.ActionUnmanage, "orders", ptr(4), nil, "delete", "create"),
			},
			wantDesired: []D{{Address: sc, StreamPrefix: "orders-v2", ConsumerGroup: "billing", Stream: "orders-v2", ShardCount: 8}},
		},
		{
			name: "data sources and other types are ignored",
			entries: []string{
				`{"address":"data.redisstreamcoordinator_group.x","mode":"data","type":"redisstreamcoordinator_group","name":"x","change":` + change(`["read"]`, `null`, orders4) + `}`,
				entry("null_resource.x", "null_resource", change(`["create"]`, `null`, orders4)),
				entry("redisstreamcoordinator_group_member.x", "redisstreamcoordinator_group_member", change(`["create"]`, `null`, orders4)),
			},
		},
		{
			name: "plan order is kept",
			entries: []string{
				entry("redisstreamcoordinator_group.b", groupType, change(`["no-op"]`, orders4, orders4)),
				entry("redisstreamcoordinator_group.a", groupType, change(`["no-op"]`, orders8, orders8)),
			},
			want: []C{
				providerChange("redisstreamcoordinator_group.b", planparse.KindGroup, planparse.ActionNoop, "orders", ptr(4), ptr(4), "no-op"),
				providerChange("redisstreamcoordinator_group.a", planparse.KindGroup, planparse.ActionNoop, "orders", ptr(8), ptr(8), "no-op"),
			},
			wantDesired: []D{
				{Address: "redisstreamcoordinator_group.b", StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 4},
				{Address: "redisstreamcoordinator_group.a", StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", ShardCount: 8},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := planparse.ParseBytes(planJSON(tt.entries...))
			require.NoError(t, err)
			require.Equal(t, tt.want, nilIfEmpty(cs.Changes))
			require.Equal(t, tt.wantDesired, nilIfEmpty(cs.Desired))
		})
	}
}
