package shardgate.rules.no_live_members_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.no_live_members

idle := object.union(f.live_group("audit", 4), {"live_members": 0, "state": "EMPTY"})

test_scale_out_with_idle_group_warns if {
	live := {"orders": f.live_stream("orders", [f.live_group("billing", 4), idle])}
	found := no_live_members.warn with input as {"changes": [f.scale(4, 8)], "live": live}
	count(found) == 1
	some v in found
	v.stream_prefix == "orders"
	v.consumer_group == "audit"
	contains(v.msg, "never leave ACTIVE")
}

test_one_warning_per_group_not_per_change if {
	live := {"orders": f.live_stream("orders", [idle])}
	changes := [f.scale(4, 8), f.change({"action": "scale", "consumer_group": "audit", "address": "module.audit.terraform_data.stream_group", "shards_after": 8})]
	count(no_live_members.warn) == 1 with input as {"changes": changes, "live": live}
}

test_scale_in_quiet if {
	live := {"orders": f.live_stream("orders", [idle])}
	count(no_live_members.warn) == 0 with input as {"changes": [f.scale(4, 2)], "live": live}
}

test_live_count_already_at_target_quiet if {
	group := object.union(idle, {"shard_count": 8})
	live := {"orders": f.live_stream("orders", [group])}
	count(no_live_members.warn) == 0 with input as {"changes": [f.scale(4, 8)], "live": live}
}

test_members_present_quiet if {
	live := {"orders": f.live_stream("orders", [f.live_group("audit", 4)])}
	count(no_live_members.warn) == 0 with input as {"changes": [f.scale(4, 8)], "live": live}
}

test_without_live_state_quiet if {
	count(no_live_members.warn) == 0 with input as {"changes": [f.scale(4, 8)]}
}
