package shardgate.rules.no_live_members_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.no_live_members

idle := object.union(f.live_group("audit", 4), {"live_members": 0, "state": "EMPTY"})

test_scale_out_with_idle_group_warns if {
	live := f.live({"orders": [f.live_group("billing", 4), idle]})
	found := no_live_members.warn with input as {"changes": [f.scale(4, 8)], "live": live}
	count(found) == 1
	some v in found
	v.stream == f.key("orders")
	v.stream_prefix == "orders"
	v.consumer_group == "audit"
	contains(v.msg, "never leave ACTIVE")
}

test_one_warning_per_group_not_per_change if {
	live := f.live({"orders": [idle]})
	changes := [f.scale(4, 8), f.change({"action": "scale", "consumer_group": "audit", "address": "module.audit.terraform_data.stream_group", "shards_after": 8})]
	count(no_live_members.warn) == 1 with input as {"changes": changes, "live": live}
}

test_scale_in_quiet if {
	live := f.live({"orders": [idle]})
	count(no_live_members.warn) == 0 with input as {"changes": [f.scale(4, 2)], "live": live}
}

test_unknown_start_quiet if {
	# Without a starting count nobody knows the scale adds shards (shard_delta
	# warns about it instead).
	live := f.live({"orders": [idle]})
	count(no_live_members.warn) == 0 with input as {"changes": [f.scale(null, 8)], "live": live}
}

test_members_present_quiet if {
	live := f.live({"orders": [f.live_group("audit", 4)]})
	count(no_live_members.warn) == 0 with input as {"changes": [f.scale(4, 8)], "live": live}
}

test_without_live_state_quiet if {
	count(no_live_members.warn) == 0 with input as {"changes": [f.scale(4, 8)]}
}

# Another coordinator's idle group of the same prefix is another stream's.
test_idle_group_on_other_coordinator_quiet if {
	live := {"http://other:8080 orders": object.union(f.live_stream("orders", [idle]), {"coordinator": "http://other:8080"})}
	count(no_live_members.warn) == 0 with input as {"changes": [f.scale(4, 8)], "live": live}
}
