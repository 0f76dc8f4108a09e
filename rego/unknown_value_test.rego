package shardgate.rules.unknown_value_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.unknown_value

test_unknown_shard_count_denied if {
	c := f.change({"action": "scale", "shards_after": null, "unknown": ["shard_count"]})
	found := unknown_value.deny with input as {"changes": [c]}
	found == {{
		"msg": "module.orders.terraform_data.stream_group: shard_count unknown until apply, so shardgate cannot check what it does to the coordinator; set it from values known at plan time",
		"stream": f.key("orders"),
		"stream_prefix": "orders",
		"consumer_group": "billing",
		"address": "module.orders.terraform_data.stream_group",
	}}
}

test_identity_fields_listed_sorted if {
	c := f.change({"action": "create", "stream_prefix": "", "consumer_group": "", "unknown": ["stream_prefix", "coordinator_base_url", "consumer_group"]})
	found := unknown_value.deny with input as {"changes": [c]}
	some v in found
	contains(v.msg, ": consumer_group, coordinator_base_url, stream_prefix unknown until apply")
}

# The coordinator is part of the identity: a group whose coordinator is unknown
# could be any group, created or scaled anywhere.
test_unknown_url_denied if {
	some action in ["create", "update", "scale", "move"]
	c := f.change({"action": action, "coordinator": "", "unknown": ["coordinator_base_url"]})
	found := unknown_value.deny with input as {"changes": [c]}
	count(found) == 1
	some v in found
	contains(v.msg, ": coordinator_base_url unknown until apply")
}

test_no_unknowns_allowed if {
	count(unknown_value.deny) == 0 with input as {"changes": [f.scale(4, 8), object.remove(f.scale(4, 8), ["unknown"])]}
}

test_missing_attribute_denied if {
	c := f.change({
		"kind": "redisstreamcoordinator_group_shard_count", "address": "redisstreamcoordinator_group_shard_count.orders",
		"coordinator": "", "action": "update", "missing": ["shard_count"],
	})
	found := unknown_value.deny with input as {"changes": [c]}
	found == {{
		"msg": "redisstreamcoordinator_group_shard_count.orders: the redisstreamcoordinator_group_shard_count resource lacks the attribute shard_count shardgate reads to know what the change does to the coordinator, so it cannot be checked",
		"stream": "orders",
		"stream_prefix": "orders",
		"consumer_group": "billing",
		"address": "redisstreamcoordinator_group_shard_count.orders",
	}}
}

test_several_missing_attributes_listed_sorted if {
	c := f.change({"kind": "redisstreamcoordinator_group", "action": "create", "missing": ["stream_prefix", "consumer_group"]})
	found := unknown_value.deny with input as {"changes": [c]}
	count(found) == 1
	some v in found
	contains(v.msg, "resource lacks the attributes consumer_group, stream_prefix shardgate reads")
}

test_import_without_starting_count_denied if {
	c := f.change({"action": "create", "shards_before": null, "importing": true})
	found := unknown_value.deny with input as {"changes": [c]}
	count(found) == 1
	some v in found
	contains(v.msg, ": imports an object whose shard count shardgate cannot know at plan time")
}

test_import_with_starting_count_allowed if {
	c := f.change({"action": "scale", "shards_before": 6, "shards_after": 8, "importing": true})
	count(unknown_value.deny) == 0 with input as {"changes": [c]}
}
