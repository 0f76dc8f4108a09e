package shardgate.rules.invalid_shard_count_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.invalid_shard_count as invalid

test_fractional_count_denied if {
	c := f.change({"action": "create", "shards_before": null, "shards_after": null, "invalid_shard_count": "4.5"})
	found := invalid.deny with input as {"changes": [c]}
	found == {{
		"msg": "module.orders.terraform_data.stream_group asks for shard_count \"4.5\": a shard count must be a whole number >= 1",
		"stream": f.key("orders"),
		"stream_prefix": "orders",
		"consumer_group": "billing",
		"address": "module.orders.terraform_data.stream_group",
	}}
}

test_zero_and_negative_denied if {
	changes := [
		f.change({"action": "scale", "address": "a", "shards_after": null, "invalid_shard_count": "0"}),
		f.change({"action": "scale", "address": "b", "shards_after": null, "invalid_shard_count": "-2"}),
	]
	found := invalid.deny with input as {"changes": changes}
	{v.address | some v in found} == {"a", "b"}
}

test_sensitive_value_not_shown if {
	c := f.change({"action": "update", "shards_after": null, "invalid_shard_count": "(sensitive)"})
	found := invalid.deny with input as {"changes": [c]}
	some v in found
	contains(v.msg, "asks for shard_count (a sensitive value): a shard count must be a whole number >= 1")
}

test_valid_counts_allowed if {
	count(invalid.deny) == 0 with input as {"changes": [f.scale(4, 8), f.change({"action": "create", "shards_before": null})]}
	count(invalid.deny) == 0 with input as {}
}
