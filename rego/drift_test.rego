package shardgate.rules.drift_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.drift

test_drifted_noop_warns if {
	c := f.change({"action": "noop", "shards_before": 6, "shards_after": 4})
	found := drift.warn with input as {"drift": [c]}
	found == {{
		"msg": "module.orders.terraform_data.stream_group asks for 4 shards but the coordinator has 6 for orders/billing, and this plan applies nothing there: set shard_count to 6 to match the coordinator, or have the code's count applied as a scale through the gate (terraform taint the instance, then plan it in a pull request)",
		"stream": f.key("orders"),
		"stream_prefix": "orders",
		"consumer_group": "billing",
		"address": "module.orders.terraform_data.stream_group",
	}}
}

test_drifted_move_warns if {
	c := f.change({"action": "move", "moved_from": "module.old", "shards_before": 2, "shards_after": 4})
	count(drift.warn) == 1 with input as {"drift": [c], "changes": [c]}
}

test_no_drift_quiet if {
	count(drift.warn) == 0 with input as {"drift": [], "changes": [f.scale(4, 8)]}
	count(drift.warn) == 0 with input as {}
}
