package planparse_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

func TestParseResources(t *testing.T) {
	const g = "redisstreamcoordinator_group.g"
	const secret = "hunter2-token"
	tests := []struct {
		name  string
		entry string
		want  []planparse.ResourceChange // nil: left out
	}{
		{
			name:  "no-op is left out",
			entry: entry(g, groupType, change(`["no-op"]`, orders4, orders4)),
		},
		{
			name:  "update lists changed attributes only",
			entry: entry(g, groupType, change(`["update"]`, orders4, orders8)),
			want:  []planparse.ResourceChange{{Address: g, Actions: []string{"update"}, Diff: []string{"shard_count: 4 -> 8"}}},
		},
		{
			name:  "create",
			entry: entry(g, groupType, `{"actions":["create"],"before":null,"after":{"consumer_group":"billing","id":null,"shard_count":4},"after_unknown":{"id":true}}`),
			want: []planparse.ResourceChange{{Address: g, Actions: []string{"create"}, Diff: []string{
				`consumer_group: (none) -> "billing"`, "id: (none) -> (known after apply)", "shard_count: (none) -> 4",
			}}},
		},
		{
			name:  "delete",
			entry: entry(g, groupType, change(`["delete"]`, `{"consumer_group":"billing","shard_count":4}`, `null`)),
			want: []planparse.ResourceChange{{Address: g, Actions: []string{"delete"}, Diff: []string{
				`consumer_group: "billing" -> (none)`, "shard_count: 4 -> (none)",
			}}},
		},
		{
			name: "sensitive attributes are redacted",
			entry: entry(g, groupType, `{"actions":["update"],`+
				`"before":{"shard_count":4,"token":"old-`+secret+`","labels":{"a":"`+secret+`"}},`+
				`"after":{"shard_count":8,"token":"`+secret+`","labels":{"a":"b"}},`+
				`"after_unknown":{},"before_sensitive":{"token":true,"labels":{"a":true}},"after_sensitive":{"token":true}}`,
				`"action_reason":"replace_because_cannot_update"`),
			want: []planparse.ResourceChange{{Address: g, Actions: []string{"update"}, ActionReason: "replace_because_cannot_update", Diff: []string{
				"shard_count: 4 -> 8", "token: (sensitive) -> (sensitive)", `labels: (sensitive) -> {"a":"b"}`,
			}}},
		},
		{
			name: "a wholly sensitive side",
			entry: entry(g, groupType, `{"actions":["update"],"before":{"shard_count":4,"token":"`+secret+`"},`+
				`"after":{"shard_count":8,"token":"x`+secret+`"},"after_unknown":{},"before_sensitive":true,"after_sensitive":true}`),
			want: []planparse.ResourceChange{{Address: g, Actions: []string{"update"}, Diff: []string{
				"shard_count: (sensitive) -> (sensitive)", "token: (sensitive) -> (sensitive)",
			}}},
		},
		{
			name: "module input fields, sensitive input redacted",
			entry: entry("module.s.terraform_data.stream_group", "terraform_data", `{"actions":["delete","create"],`+
				`"before":`+moduleInput("orders", "4")+`,"after":`+moduleInput(secret, "8")+`,"after_unknown":{"id":true},`+
				`"before_sensitive":{"input":{}},"after_sensitive":{"input":{"stream_prefix":true}}}`),
			want: []planparse.ResourceChange{{Address: "module.s.terraform_data.stream_group", Actions: []string{"delete", "create"}, Diff: []string{
				"shard_count: 4 -> 8", `stream_prefix: "orders" -> (sensitive)`,
			}}},
		},
		{
			name: "module input unknown",
			entry: entry("module.s.terraform_data.stream_group", "terraform_data", `{"actions":["delete","create"],`+
				`"before":`+moduleInput("orders", "4")+`,"after":{},"after_unknown":{"input":true}}`),
			want: []planparse.ResourceChange{{Address: "module.s.terraform_data.stream_group", Actions: []string{"delete", "create"}, Diff: []string{
				`consumer_group: "billing" -> (known after apply)`, `coordinator_base_url: "http://c" -> (known after apply)`,
				"shard_count: 4 -> (known after apply)", `stream_prefix: "orders" -> (known after apply)`,
			}}},
		},
		{
			// Cut at 120 bytes, backing off to a whole UTF-8 character.
			name: "long values are cut",
			entry: entry(g, groupType, change(`["update"]`, orders4,
				`{"stream_prefix":"orders","consumer_group":"billing","shard_count":4,"id":"orders/billing","note":"`+strings.Repeat("é", 78)+`"}`)),
			want: []planparse.ResourceChange{{Address: g, Actions: []string{"update"}, Diff: []string{
				`note: null -> "` + strings.Repeat("é", 59) + `...`,
			}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := planparse.ParseBytes(planJSON(tt.entry))
			require.NoError(t, err)
			require.Equal(t, tt.want, nilIfEmpty(withoutFingerprints(t, cs.Resources)))
			out, err := json.Marshal(cs.Resources)
			require.NoError(t, err)
			require.NotContains(t, string(out), secret)
		})
	}
}
