package planparse_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// moduleInputAt is moduleInput with the coordinator URL as written.
func moduleInputAt(url, prefix, shards string) string {
	return `{"id":"x","input":{"consumer_group":"billing","coordinator_base_url":"` + url + `","shard_count":` + shards +
		`,"stream_prefix":"` + prefix + `"},"triggers_replace":["` + url + `","` + prefix + `","billing","n"]}`
}

const tainted = `"action_reason":"replace_because_tainted"`

// A tainted instance's last apply failed: its prior count says nothing about the
// coordinator, and the retry calls the coordinator's scale.
func TestParseTainted(t *testing.T) {
	const m = "module.s.terraform_data.stream_group"
	const g, sc = "redisstreamcoordinator_group.g", "redisstreamcoordinator_group_shard_count.sc"
	type C = planparse.Change
	taint := func(c C) C {
		c.PriorShards, c.ShardsBefore, c.Tainted = c.ShardsBefore, nil, true
		c.ActionReason = "replace_because_tainted"
		return c
	}
	tests := []struct {
		name    string
		entries []string
		want    []C
	}{
		{
			name:    "retry at the same count is a scale from an unknown count",
			entries: []string{moduleEntry(m, `["delete","create"]`, moduleInput("orders", "5"), moduleInput("orders", "5"), `{"id":true}`, tainted)},
			want:    []C{taint(modChange(m, planparse.ActionScale, "orders", ptr(5), ptr(5), nil, "delete", "create"))},
		},
		{
			name:    "retry at another count",
			entries: []string{moduleEntry(m, `["create","delete"]`, moduleInput("orders", "5"), moduleInput("orders", "6"), `{"id":true}`, tainted)},
			want:    []C{taint(modChange(m, planparse.ActionScale, "orders", ptr(5), ptr(6), nil, "create", "delete"))},
		},
		{
			name:    "OpenTofu forget then create of a tainted instance",
			entries: []string{moduleEntry(m, `["forget","create"]`, moduleInput("orders", "5"), moduleInput("orders", "5"), `{"id":true}`, tainted)},
			want:    []C{taint(modChange(m, planparse.ActionScale, "orders", ptr(5), ptr(5), nil, "forget", "create"))},
		},
		{
			name:    "tainted group replace",
			entries: []string{entry(g, groupType, change(`["delete","create"]`, orders4, orders4), tainted)},
			want: []C{
				taint(providerChange(g, planparse.KindGroup, planparse.ActionDelete, "orders", ptr(4), nil, "delete", "create")),
				taint(providerChange(g, planparse.KindGroup, planparse.ActionCreate, "orders", nil, ptr(4), "delete", "create")),
			},
		},
		{
			name:    "tainted shard count replace",
			entries: []string{entry(sc, countType, change(`["delete","create"]`, orders4, orders4), tainted)},
			want:    []C{taint(providerChange(sc, planparse.KindShardCount, planparse.ActionScale, "orders", ptr(4), ptr(4), "delete", "create"))},
		},
		{
			name: "a replace that is not tainted trusts the prior count",
			entries: []string{moduleEntry(m, `["delete","create"]`, moduleInput("orders", "5"), moduleInput("orders", "5"), `{"id":true}`,
				`"action_reason":"replace_by_request"`)},
			want: []C{func() C {
				c := modChange(m, planparse.ActionUpdate, "orders", ptr(5), ptr(5), nil, "delete", "create")
				c.ActionReason = "replace_by_request"
				return c
			}()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, parse := range parsers {
				cs, err := parse(planJSON(tt.entries...))
				require.NoError(t, err, name)
				require.Equal(t, tt.want, cs.Changes, name)
				for _, c := range cs.Changes {
					if c.Action != planparse.ActionDelete {
						require.Equal(t, c.Action != planparse.ActionUnmanage, c.CallsCoordinator())
					}
				}
			}
		})
	}
}

// Plans of terraform before 1.2 have no action_reason: the prior state's tainted
// flag, where the plan shows it, says the same.
func TestParseTaintedInPriorState(t *testing.T) {
	const m = "module.s.terraform_data.stream_group"
	e := moduleEntry(m, `["delete","create"]`, moduleInput("orders", "5"), moduleInput("orders", "5"), `{"id":true}`)
	prior := func(taint string) string {
		return `{"format_version":"1.0","values":{"root_module":{"child_modules":[{"address":"module.s","resources":[` +
			`{"address":"` + m + `","mode":"managed","type":"terraform_data","name":"stream_group","values":{"tainted":true,"address":"x"}` + taint + `}]}]}}}`
	}
	plans := map[string]string{
		"prior_state after":  `{"format_version":"1.0","resource_changes":[` + e + `],"prior_state":` + prior(`,"tainted":true`) + `}`,
		"prior_state before": `{"format_version":"1.0","prior_state":` + prior(`,"tainted":true`) + `,"resource_changes":[` + e + `]}`,
	}
	want := modChange(m, planparse.ActionScale, "orders", nil, ptr(5), nil, "delete", "create")
	want.PriorShards, want.Tainted = ptr(5), true
	for name, plan := range plans {
		for pname, parse := range parsers {
			cs, err := parse([]byte(plan))
			require.NoError(t, err, "%s %s", name, pname)
			require.Equal(t, []planparse.Change{want}, cs.Changes, "%s %s", name, pname)
		}
	}
	// A tainted instance moved without a moved block: the plan's reasons say
	// nothing of the taint, and its prior count is no count to move from.
	const b = `module.t.terraform_data.stream_group`
	moved := `{"format_version":"1.2","resource_changes":[` +
		moduleEntry(m, `["delete"]`, moduleInput("orders", "5"), `null`, `{}`, `"action_reason":"delete_because_no_module"`) + `,` +
		moduleEntry(b, `["create"]`, `null`, moduleInput("orders", "5"), `{"id":true}`) + `],"prior_state":` + prior(`,"tainted":true`) + `}`
	wantMoved := modChange(b, planparse.ActionScale, "orders", nil, ptr(5), nil, "create")
	wantMoved.PriorShards, wantMoved.Tainted, wantMoved.MovedFrom = ptr(5), true, m
	for pname, parse := range parsers {
		cs, err := parse([]byte(moved))
		require.NoError(t, err, pname)
		require.Equal(t, []planparse.Change{wantMoved}, cs.Changes, pname)
	}
	// Attributes of the instance named "tainted" are not the flag.
	cs, err := planparse.ParseBytes([]byte(`{"format_version":"1.0","resource_changes":[` + e + `],"prior_state":` + prior(``) + `}`))
	require.NoError(t, err)
	require.Equal(t, planparse.ActionUpdate, cs.Changes[0].Action)
	require.False(t, cs.Changes[0].Tainted)
}

// A group is (coordinator, prefix, group) with the coordinator URL normalized.
func TestParseIdentity(t *testing.T) {
	const m = "module.s.terraform_data.stream_group"
	type C = planparse.Change
	at := func(c C, url string) C {
		c.CoordinatorURL = url
		c.Coordinator = planparse.NormalizeURL(url)
		c.Stream = planparse.StreamKey(c.Coordinator, c.StreamPrefix)
		return c
	}
	tests := []struct {
		name    string
		entries []string
		want    []C
	}{
		{
			name: "a trailing slash and an upper-case host are the same coordinator",
			entries: []string{moduleEntry(m, `["delete","create"]`, moduleInputAt("http://c", "orders", "4"),
				moduleInputAt("HTTP://C:80/", "orders", "4"), `{"id":true}`, `"action_reason":"replace_because_cannot_update"`)},
			want: []C{func() C {
				c := at(modChange(m, planparse.ActionUpdate, "orders", ptr(4), ptr(4), nil, "delete", "create"), "HTTP://C:80/")
				c.ActionReason = "replace_because_cannot_update"
				return c
			}()},
		},
		{
			name: "the same coordinator spelled otherwise at another count",
			entries: []string{moduleEntry(m, `["delete","create"]`, moduleInputAt("http://c", "orders", "4"),
				moduleInputAt("http://c/", "orders", "8"), `{"id":true}`)},
			want: []C{at(modChange(m, planparse.ActionScale, "orders", ptr(4), ptr(8), nil, "delete", "create"), "http://c/")},
		},
		{
			name: "another coordinator is another group",
			entries: []string{moduleEntry(m, `["delete","create"]`, moduleInputAt("http://c", "orders", "4"),
				moduleInputAt("http://d", "orders", "4"), `{"id":true}`)},
			want: []C{
				at(modChange(m, planparse.ActionCreate, "orders", nil, ptr(4), nil, "delete", "create"), "http://d"),
				modChange(m, planparse.ActionUnmanage, "orders", ptr(4), nil, nil, "delete", "create"),
			},
		},
		{
			name: "an unknown coordinator names no stream",
			entries: []string{moduleEntry(m, `["create"]`, `null`, `{"input":{"consumer_group":"billing","shard_count":4,"stream_prefix":"orders"}}`,
				`{"id":true,"input":{"coordinator_base_url":true}}`)},
			want: []C{{Address: m, Kind: planparse.KindModule, StreamPrefix: "orders", ConsumerGroup: "billing", Action: planparse.ActionCreate,
				ShardsAfter: ptr(4), Unknown: []string{planparse.FieldCoordinatorURL}, TerraformActions: []string{"create"}}},
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
	cs, err := planparse.ParseBytes(planJSON(moduleEntry(m, `["create"]`, `null`, moduleInputAt("http://C/", "orders", "4"), `{"id":true}`)))
	require.NoError(t, err)
	require.Equal(t, []planparse.Desired{{Address: m, StreamPrefix: "orders", ConsumerGroup: "billing", Coordinator: "http://c",
		Stream: "http://c orders", ShardCount: 4}}, cs.Desired)
}

// One plan removing an identity at one address and adding it at another is one
// change: the coordinator ends where it started, or is scaled.
func TestParseMoves(t *testing.T) {
	const a, b = `module.s["a"].terraform_data.stream_group`, `module.s["b"].terraform_data.stream_group`
	const g1, g2 = "redisstreamcoordinator_group.one", "redisstreamcoordinator_group.two"
	const sc1, sc2 = "redisstreamcoordinator_group_shard_count.one", "redisstreamcoordinator_group_shard_count.two"
	type C = planparse.Change
	moved := func(c C, from string, before *int) C {
		c.MovedFrom, c.ShardsBefore, c.PriorShards = from, before, before
		return c
	}
	tests := []struct {
		name    string
		entries []string
		want    []C
	}{
		{
			name: "module moved without a moved block",
			entries: []string{
				moduleEntry(a, `["delete"]`, moduleInput("orders", "4"), `null`, `{}`, `"action_reason":"delete_because_each_key"`),
				moduleEntry(b, `["create"]`, `null`, moduleInput("orders", "4"), `{"id":true}`),
			},
			want: []C{moved(modChange(b, planparse.ActionMove, "orders", nil, ptr(4), nil, "create"), a, ptr(4))},
		},
		{
			name: "moved and scaled, the addition first",
			entries: []string{
				moduleEntry(a, `["create"]`, `null`, moduleInputAt("http://c/", "orders", "8"), `{"id":true}`),
				moduleEntry(b, `["delete"]`, moduleInput("orders", "4"), `null`, `{}`),
			},
			want: []C{func() C {
				c := moved(modChange(a, planparse.ActionScale, "orders", nil, ptr(8), nil, "create"), b, ptr(4))
				c.CoordinatorURL = "http://c/"
				return c
			}()},
		},
		{
			name: "a moved block: a noop that keeps where it came from",
			entries: []string{moduleEntry(b, `["no-op"]`, moduleInput("orders", "4"), moduleInput("orders", "4"), `{}`,
				`"previous_address":"`+quote(a)[1:len(quote(a))-1]+`"`)},
			want: []C{func() C {
				c := modChange(b, planparse.ActionNoop, "orders", ptr(4), ptr(4), nil, "no-op")
				c.MovedFrom = a
				return c
			}()},
		},
		{
			name: "a group forgotten and added elsewhere",
			entries: []string{
				entry(g1, groupType, change(`["forget"]`, orders4, `null`)),
				entry(g2, groupType, change(`["create"]`, `null`, orders4)),
			},
			want: []C{moved(providerChange(g2, planparse.KindGroup, planparse.ActionMove, "orders", nil, ptr(4), "create"), g1, ptr(4))},
		},
		{
			name: "a group destroyed and created elsewhere really loses its metadata",
			entries: []string{
				entry(g1, groupType, change(`["delete"]`, orders4, `null`)),
				entry(g2, groupType, change(`["create"]`, `null`, orders4)),
			},
			want: []C{
				providerChange(g1, planparse.KindGroup, planparse.ActionDelete, "orders", ptr(4), nil, "delete"),
				providerChange(g2, planparse.KindGroup, planparse.ActionCreate, "orders", nil, ptr(4), "create"),
			},
		},
		{
			name: "a shard count moved",
			entries: []string{
				entry(sc1, countType, change(`["delete"]`, orders4, `null`)),
				entry(sc2, countType, change(`["create"]`, `null`, orders8)),
			},
			want: []C{moved(providerChange(sc2, planparse.KindShardCount, planparse.ActionScale, "orders", nil, ptr(8), "create"), sc1, ptr(4))},
		},
		{
			name: "an unknown identity never pairs",
			entries: []string{
				moduleEntry(a, `["delete"]`, moduleInput("orders", "4"), `null`, `{}`),
				moduleEntry(b, `["create"]`, `null`, `{"input":{"consumer_group":"billing","coordinator_base_url":"http://c","shard_count":4}}`,
					`{"id":true,"input":{"stream_prefix":true}}`),
			},
			want: []C{
				modChange(a, planparse.ActionUnmanage, "orders", ptr(4), nil, nil, "delete"),
				func() C {
					c := modChange(b, planparse.ActionCreate, "", nil, ptr(4), []string{planparse.FieldStreamPrefix}, "create")
					c.Stream = ""
					return c
				}(),
			},
		},
		{
			name: "two coordinators with one prefix are two streams",
			entries: []string{
				moduleEntry(a, `["delete"]`, moduleInput("orders", "4"), `null`, `{}`),
				moduleEntry(b, `["create"]`, `null`, moduleInputAt("http://d", "orders", "4"), `{"id":true}`),
			},
			want: []C{
				modChange(a, planparse.ActionUnmanage, "orders", ptr(4), nil, nil, "delete"),
				func() C {
					c := modChange(b, planparse.ActionCreate, "orders", nil, ptr(4), nil, "create")
					c.CoordinatorURL, c.Coordinator, c.Stream = "http://d", "http://d", "http://d orders"
					return c
				}(),
			},
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

// A count that is not a whole number >= 1 is judged (denied), not refused.
func TestParseInvalidShardCount(t *testing.T) {
	const m = "module.s.terraform_data.stream_group"
	const g = "redisstreamcoordinator_group.g"
	type C = planparse.Change
	invalid := func(c C, as string) C {
		c.InvalidShardCount = as
		return c
	}
	groupWith := func(count string) string {
		return `{"stream_prefix":"orders","consumer_group":"billing","shard_count":` + count + `}`
	}
	tests := []struct {
		name  string
		entry string
		want  []C
	}{
		{"fractional", moduleEntry(m, `["delete","create"]`, moduleInput("orders", "4"), moduleInput("orders", "4.5"), `{"id":true}`),
			[]C{invalid(modChange(m, planparse.ActionScale, "orders", ptr(4), nil, nil, "delete", "create"), "4.5")}},
		{"zero", moduleEntry(m, `["create"]`, `null`, moduleInput("orders", "0"), `{"id":true}`),
			[]C{invalid(modChange(m, planparse.ActionCreate, "orders", nil, nil, nil, "create"), "0")}},
		{"negative", moduleEntry(m, `["create"]`, `null`, moduleInput("orders", "-3"), `{"id":true}`),
			[]C{invalid(modChange(m, planparse.ActionCreate, "orders", nil, nil, nil, "create"), "-3")}},
		{"too large", moduleEntry(m, `["create"]`, `null`, moduleInput("orders", "1e400"), `{"id":true}`),
			[]C{invalid(modChange(m, planparse.ActionCreate, "orders", nil, nil, nil, "create"), "1e400")}},
		{"a string", moduleEntry(m, `["create"]`, `null`, moduleInput("orders", `"four"`), `{"id":true}`),
			[]C{invalid(modChange(m, planparse.ActionCreate, "orders", nil, nil, nil, "create"), `"four"`)}},
		{"a provider count as a string", entry(g, groupType, change(`["update"]`, orders4, groupWith(`"16"`))),
			[]C{invalid(providerChange(g, planparse.KindGroup, planparse.ActionScale, "orders", ptr(4), nil, "update"), `"16"`)}},
		{"sensitive", entry(g, groupType, `{"actions":["update"],"before":`+orders4+`,"after":`+groupWith(`"s3cret"`)+
			`,"after_unknown":{},"after_sensitive":{"shard_count":true}}`),
			[]C{invalid(providerChange(g, planparse.KindGroup, planparse.ActionScale, "orders", ptr(4), nil, "update"), "(sensitive)")}},
		{"an invalid prior count is no prior count", entry(g, groupType, change(`["update"]`, groupWith("2.5"), orders4)),
			[]C{providerChange(g, planparse.KindGroup, planparse.ActionScale, "orders", nil, ptr(4), "update")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, parse := range parsers {
				cs, err := parse(planJSON(tt.entry))
				require.NoError(t, err, name)
				require.Equal(t, tt.want, cs.Changes, name)
				if tt.want[0].InvalidShardCount != "" {
					require.Empty(t, cs.Desired, "no desired count from an invalid one")
				}
				require.NotContains(t, string(mustJSON(t, cs)), "s3cret")
			}
		})
	}
}

// Provider resources are read by the attribute names docs/policy-input.md lists;
// a side without them cannot be judged, and never looks like a harmless update.
func TestParseProviderMissingAttributes(t *testing.T) {
	const g, sc = "redisstreamcoordinator_group.g", "redisstreamcoordinator_group_shard_count.sc"
	type C = planparse.Change
	other := func(shards string) string { return `{"prefix":"orders","group":"billing","shards":` + shards + `}` }
	all := []string{planparse.FieldStreamPrefix, planparse.FieldConsumerGroup, planparse.FieldShardCount}
	tests := []struct {
		name  string
		entry string
		want  []C
	}{
		{"a 4 to 16 scale under other attribute names", entry(g, groupType, change(`["update"]`, other("4"), other("16"))),
			[]C{{Address: g, Kind: planparse.KindGroup, Action: planparse.ActionScale, Missing: all, TerraformActions: []string{"update"}}}},
		{"the count missing after", entry(sc, countType, change(`["update"]`, orders4, `{"stream_prefix":"orders","consumer_group":"billing","count":16}`)),
			[]C{func() C {
				c := providerChange(sc, planparse.KindShardCount, planparse.ActionScale, "orders", ptr(4), nil, "update")
				c.Missing = []string{planparse.FieldShardCount}
				return c
			}()}},
		{"a create without a prefix", entry(g, groupType, change(`["create"]`, `null`, `{"consumer_group":"billing","shard_count":4}`)),
			[]C{func() C {
				c := providerChange(g, planparse.KindGroup, planparse.ActionCreate, "", nil, ptr(4), "create")
				c.Missing, c.Stream = []string{planparse.FieldStreamPrefix}, ""
				return c
			}()}},
		{"an unknown attribute is not missing", entry(g, groupType, `{"actions":["create"],"before":null,"after":{"stream_prefix":"orders","consumer_group":"billing"},"after_unknown":{"shard_count":true}}`),
			[]C{func() C {
				c := providerChange(g, planparse.KindGroup, planparse.ActionCreate, "orders", nil, nil, "create")
				c.Unknown = []string{planparse.FieldShardCount}
				return c
			}()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, parse := range parsers {
				cs, err := parse(planJSON(tt.entry))
				require.NoError(t, err, name)
				require.Equal(t, tt.want, cs.Changes, name)
			}
		})
	}
}
