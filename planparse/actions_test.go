package planparse_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// Every action list terraform (jsonplan.actionString) and OpenTofu write, and
// nothing else.
func TestParseActions(t *testing.T) {
	const m = "module.s.terraform_data.stream_group"
	const g, sc = "redisstreamcoordinator_group.g", "redisstreamcoordinator_group_shard_count.sc"
	type C = planparse.Change
	group := func(a planparse.Action, prefix string, before, after *int, actions ...string) C {
		return providerChange(g, planparse.KindGroup, a, prefix, before, after, actions...)
	}
	tests := []struct {
		name    string
		entries []string
		want    []C
	}{
		{
			name:    "module forget then create (OpenTofu, destroy = false) is a replace",
			entries: []string{moduleEntry(m, `["forget","create"]`, moduleInput("orders", "4"), moduleInput("orders", "8"), `{"id":true}`)},
			want:    []C{modChange(m, planparse.ActionScale, "orders", ptr(4), ptr(8), nil, "forget", "create")},
		},
		{
			name:    "module create then forget (terraform) at the same count",
			entries: []string{moduleEntry(m, `["create","forget"]`, moduleInput("orders", "4"), moduleInput("orders", "4"), `{"id":true}`)},
			want:    []C{modChange(m, planparse.ActionUpdate, "orders", ptr(4), ptr(4), nil, "create", "forget")},
		},
		{
			name:    "module forget then create of another identity",
			entries: []string{moduleEntry(m, `["forget","create"]`, moduleInput("orders", "4"), moduleInput("orders-v2", "4"), `{"id":true}`)},
			want: []C{
				modChange(m, planparse.ActionCreate, "orders-v2", nil, ptr(4), nil, "forget", "create"),
				modChange(m, planparse.ActionUnmanage, "orders", ptr(4), nil, nil, "forget", "create"),
			},
		},
		{
			name:    "group forget then create keeps the metadata: a scale",
			entries: []string{entry(g, groupType, change(`["forget","create"]`, orders4, orders8))},
			want:    []C{group(planparse.ActionScale, "orders", ptr(4), ptr(8), "forget", "create")},
		},
		{
			name:    "group create then forget of another identity: the old one is unmanaged, not deleted",
			entries: []string{entry(g, groupType, change(`["create","forget"]`, orders4, renamed8))},
			want: []C{
				group(planparse.ActionCreate, "orders-v2", nil, ptr(8), "create", "forget"),
				group(planparse.ActionUnmanage, "orders", ptr(4), nil, "create", "forget"),
			},
		},
		{
			name:    "group create before destroy destroys the metadata",
			entries: []string{entry(g, groupType, change(`["create","delete"]`, orders4, orders8))},
			want: []C{
				group(planparse.ActionDelete, "orders", ptr(4), nil, "create", "delete"),
				group(planparse.ActionCreate, "orders", nil, ptr(8), "create", "delete"),
			},
		},
		{
			name:    "shard count forget then create",
			entries: []string{entry(sc, countType, change(`["forget","create"]`, orders4, orders8))},
			want:    []C{providerChange(sc, planparse.KindShardCount, planparse.ActionScale, "orders", ptr(4), ptr(8), "forget", "create")},
		},
		{
			name:    "shard count forget",
			entries: []string{entry(sc, countType, change(`["forget"]`, orders4, `null`))},
			want:    []C{providerChange(sc, planparse.KindShardCount, planparse.ActionUnmanage, "orders", ptr(4), nil, "forget")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, parse := range parsers {
				cs, err := parse(planJSON(tt.entries...))
				require.NoError(t, err, name)
				require.Equal(t, tt.want, cs.Changes, name)
			}
		})
	}
}

// An action nobody defines fails the whole plan, wherever it appears: what
// cannot be read cannot be judged.
func TestParseUnknownActions(t *testing.T) {
	const m = "module.s.terraform_data.stream_group"
	tests := []struct{ name, entry, want string }{
		{"module", moduleEntry(m, `["teleport"]`, moduleInput("orders", "4"), moduleInput("orders", "4"), `{}`),
			`parse plan: module.s.terraform_data.stream_group: unknown action "teleport"`},
		{"provider group", entry("redisstreamcoordinator_group.g", groupType, change(`["create","update"]`, `null`, orders4)),
			`parse plan: redisstreamcoordinator_group.g: unsupported actions ["create" "update"]`},
		{"another resource", entry("aws_s3_bucket.b", "aws_s3_bucket", change(`["open"]`, `null`, `{}`)),
			`parse plan: aws_s3_bucket.b: unknown action "open"`},
		{"another resource, two known actions", entry("aws_s3_bucket.b", "aws_s3_bucket", change(`["delete","delete"]`, `{}`, `null`)),
			`parse plan: aws_s3_bucket.b: unsupported actions ["delete" "delete"]`},
		{"no actions", entry("aws_s3_bucket.b", "aws_s3_bucket", change(`[]`, `{}`, `null`)),
			`parse plan: aws_s3_bucket.b: unsupported actions []`},
		{"actions missing", entry("aws_s3_bucket.b", "aws_s3_bucket", `{"before":null,"after":{}}`),
			`parse plan: aws_s3_bucket.b: change.actions is missing`},
		{"change missing", `{"address":"aws_s3_bucket.b","mode":"managed","type":"aws_s3_bucket","name":"b"}`,
			`parse plan: aws_s3_bucket.b: change is missing`},
		{"a data source", `{"address":"data.x.y","mode":"data","type":"x","name":"y","change":` + change(`["Read"]`, `null`, `{}`) + `}`,
			`parse plan: data.x.y: unknown action "Read"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, parse := range parsers {
				cs, err := parse(planJSON(tt.entry))
				require.EqualError(t, err, tt.want, name)
				require.Nil(t, cs)
			}
		})
	}
}
