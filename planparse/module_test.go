package planparse_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

func moduleInput(prefix string, shards string) string {
	return `{"id":"x","input":{"consumer_group":"billing","coordinator_base_url":"http://c","shard_count":` + shards +
		`,"stream_prefix":"` + prefix + `"},"triggers_replace":["http://c","` + prefix + `","billing","n"]}`
}

func moduleEntry(address, actions, before, after, afterUnknown string, extra ...string) string {
	return entry(address, "terraform_data", `{"actions":`+actions+`,"before":`+before+`,"after":`+after+
		`,"after_unknown":`+afterUnknown+`,"before_sensitive":{"input":{}},"after_sensitive":{"input":{}}}`, extra...)
}

func modChange(address string, a planparse.Action, prefix string, before, after *int, unknown []string, actions ...string) planparse.Change {
	stream := "http://c " + prefix
	if slices.Contains(unknown, planparse.FieldStreamPrefix) || slices.Contains(unknown, planparse.FieldCoordinatorURL) {
		stream = ""
	}
	return planparse.Change{Address: address, Kind: planparse.KindModule, StreamPrefix: prefix, ConsumerGroup: "billing",
		CoordinatorURL: "http://c", Coordinator: "http://c", Stream: stream, Action: a, ShardsBefore: before, ShardsAfter: after,
		PriorShards: before, Unknown: unknown, TerraformActions: actions}
}

// modDesired is the Desired of a module instance of moduleInput.
func modDesired(address, prefix string, n int) planparse.Desired {
	return planparse.Desired{Address: address, StreamPrefix: prefix, ConsumerGroup: "billing", Coordinator: "http://c",
		Stream: "http://c " + prefix, ShardCount: n}
}

func TestParseModuleShapes(t *testing.T) {
	const nested = `module.a["x"].module.b[0].terraform_data.stream_group`
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
			name:        "nested modules with count and for_each",
			entries:     []string{moduleEntry(nested, `["create"]`, `null`, moduleInput("orders", "4"), `{"id":true}`)},
			want:        []C{modChange(nested, planparse.ActionCreate, "orders", nil, ptr(4), nil, "create")},
			wantDesired: []D{modDesired(nested, "orders", 4)},
		},
		{
			name:        "create then delete is a scale too",
			entries:     []string{moduleEntry(nested, `["create","delete"]`, moduleInput("orders", "4"), moduleInput("orders", "8"), `{"id":true}`)},
			want:        []C{modChange(nested, planparse.ActionScale, "orders", ptr(4), ptr(8), nil, "create", "delete")},
			wantDesired: []D{modDesired(nested, "orders", 8)},
		},
		{
			name:        "in-place update of the count",
			entries:     []string{moduleEntry(nested, `["update"]`, moduleInput("orders", "4"), moduleInput("orders", "8"), `{}`)},
			want:        []C{modChange(nested, planparse.ActionScale, "orders", ptr(4), ptr(8), nil, "update")},
			wantDesired: []D{modDesired(nested, "orders", 8)},
		},
		{
			name:        "in-place update of nothing coordinator-related",
			entries:     []string{moduleEntry(nested, `["update"]`, moduleInput("orders", "4"), moduleInput("orders", "4"), `{}`)},
			want:        []C{modChange(nested, planparse.ActionUpdate, "orders", ptr(4), ptr(4), nil, "update")},
			wantDesired: []D{modDesired(nested, "orders", 4)},
		},
		{
			name: "whole input unknown",
			entries: []string{moduleEntry(nested, `["create"]`, `null`, `{"triggers_replace":null}`,
				`{"id":true,"input":true,"triggers_replace":true}`)},
			want: []C{{Address: nested, Kind: planparse.KindModule, Action: planparse.ActionCreate,
				Unknown:          []string{planparse.FieldStreamPrefix, planparse.FieldConsumerGroup, planparse.FieldShardCount, planparse.FieldCoordinatorURL},
				TerraformActions: []string{"create"}}},
		},
		{
			name: "unknown prefix in a replace is a new identity",
			entries: []string{moduleEntry(nested, `["delete","create"]`, moduleInput("orders", "4"),
				`{"input":{"consumer_group":"billing","coordinator_base_url":"http://c","shard_count":4}}`,
				`{"id":true,"input":{"stream_prefix":true}}`)},
			want: []C{
				func() C {
					c := modChange(nested, planparse.ActionCreate, "", nil, ptr(4), []string{planparse.FieldStreamPrefix}, "delete", "create")
					return c
				}(),
				modChange(nested, planparse.ActionUnmanage, "orders", ptr(4), nil, nil, "delete", "create"),
			},
		},
		{
			name:    "forget",
			entries: []string{moduleEntry(nested, `["forget"]`, moduleInput("orders", "4"), `null`, `{}`)},
			want:    []C{modChange(nested, planparse.ActionUnmanage, "orders", ptr(4), nil, nil, "forget")},
		},
		{
			name: "read and other shapes are ignored",
			entries: []string{
				moduleEntry(nested, `["read"]`, `null`, moduleInput("orders", "4"), `{}`),
				moduleEntry("terraform_data.stream_group", `["create"]`, `null`, `{"input":{"stream_prefix":"orders"}}`, `{}`),
				moduleEntry("terraform_data.stream_group", `["create"]`, `null`, `{"input":"orders"}`, `{}`),
				moduleEntry("terraform_data.other", `["create"]`, `null`, moduleInput("orders", "4"), `{}`),
			},
		},
		{
			name:        "a terraform_data that becomes a stream group",
			entries:     []string{moduleEntry(nested, `["update"]`, `{"input":"nothing"}`, moduleInput("orders", "4"), `{}`)},
			want:        []C{modChange(nested, planparse.ActionCreate, "orders", nil, ptr(4), nil, "update")},
			wantDesired: []D{modDesired(nested, "orders", 4)},
		},
		{
			name: "OpenTofu's sorted members: change before type",
			entries: []string{`{"action_reason":"replace_because_tainted","address":"module.s.terraform_data.stream_group","change":` +
				`{"actions":["delete","create"],"after":` + moduleInput("orders", "4") + `,"after_unknown":{},"before":` + moduleInput("orders", "4") +
				`},"mode":"managed","module_address":"module.s","name":"stream_group","provider_name":"terraform.io/builtin/terraform","type":"terraform_data"}`},
			want: []C{func() C {
				// The retry of a failed apply: its prior count is not trusted.
				c := modChange("module.s.terraform_data.stream_group", planparse.ActionScale, "orders", nil, ptr(4), nil, "delete", "create")
				c.ActionReason, c.PriorShards, c.Tainted = "replace_because_tainted", ptr(4), true
				return c
			}()},
			wantDesired: []D{modDesired("module.s.terraform_data.stream_group", "orders", 4)},
		},
		{
			name: "escaped type name",
			entries: []string{`{"address":"terraform_data.stream_group","mode":"managed","type":"terraform\u005fdata","name":"stream_group","change":` +
				`{"actions":["create"],"before":null,"after":` + moduleInput("orders", "4.0") + `}}`},
			want:        []C{modChange("terraform_data.stream_group", planparse.ActionCreate, "orders", nil, ptr(4), nil, "create")},
			wantDesired: []D{modDesired("terraform_data.stream_group", "orders", 4)},
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
