# Fixtures shared by the Rego unit tests; never loaded by the engine.
package shardgate.fixtures_test

coordinator := "http://coordinator:8080"

# key is the stream key of a prefix on the fixtures' coordinator, as
# planparse.StreamKey writes it.
key(prefix) := concat(" ", [coordinator, prefix])

base_change := {
	"address": "module.orders.terraform_data.stream_group",
	"kind": "stream_group_module",
	"stream_prefix": "orders",
	"consumer_group": "billing",
	"coordinator_url": "http://coordinator:8080",
	"coordinator": coordinator,
	"stream": key("orders"),
	"action": "noop",
	"shards_before": 4,
	"shards_after": 4,
	"prior_shards": 4,
	"tainted": false,
	"moved_from": "",
	"unknown": [],
	"missing": [],
	"invalid_shard_count": "",
	"action_reason": "",
	"terraform_actions": ["no-op"],
}

# change is base_change with some fields replaced; its stream follows its
# coordinator and prefix unless fields name one.
change(fields) := object.union(c, {"stream": s}) if {
	c := object.union(base_change, fields)
	s := object.get(fields, "stream", stream_key(c.coordinator, c.stream_prefix))
}

stream_key(coord, prefix) := prefix if coord == ""

else := concat(" ", [coord, prefix])

# scale is a scale of orders/billing from before to after shards.
scale(before, after) := change({
	"action": "scale",
	"shards_before": before,
	"shards_after": after,
	"action_reason": "replace_because_cannot_update",
	"terraform_actions": ["delete", "create"],
})

# live_group is a stable coordinator group with one live member.
live_group(group, shards) := {
	"consumer_group": group,
	"shard_count": shards,
	"state": "STABLE",
	"active_migration_id": "",
	"migration_state": "",
	"live_members": 1,
	"metadata_version": 7,
}

default_config := {"max_shard_delta": 4, "max_scale_factor": 2, "duplicate_tolerant_streams": {}}

# live_stream is input.live[key(prefix)] as the engine writes it, indexes included.
live_stream(prefix, groups) := object.union(
	{
		"coordinator": coordinator,
		"stream_prefix": prefix,
		"groups": groups,
		"metadata_version_regressed": false,
		"shard_counts": {g.consumer_group: g.shard_count | some g in groups},
	},
	{"max_shard_count": m | count(groups) > 0; m := max([g.shard_count | some g in groups])},
)

# live is input.live for some streams of the fixtures' coordinator: {prefix: groups}.
live(streams) := {key(prefix): live_stream(prefix, groups) | some prefix, groups in streams}
