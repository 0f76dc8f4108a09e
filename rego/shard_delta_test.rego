package shardgate.rules.shard_delta_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.shard_delta

deny_for(changes, live) := found if {
	found := shard_delta.deny with input as {"changes": changes, "live": live, "config": f.default_config}
}

only_msg(found) := msg if {
	count(found) == 1
	some v in found
	msg := v.msg
}

test_at_the_limits_allowed if {
	count(deny_for([f.scale(4, 8)], {})) == 0 # +4, factor 2
	count(deny_for([f.scale(8, 4)], {})) == 0
	count(deny_for([f.scale(10, 14)], {})) == 0
}

test_delta_over_limit_denied if {
	only_msg(deny_for([f.scale(10, 15)], {})) == "module.orders.terraform_data.stream_group scales stream orders from 10 to 15 shards (+5 shards, a factor of 1.5 up), over the limits of 4 shards and a factor of 2 per change"
}

test_factor_over_limit_up_denied if {
	only_msg(deny_for([f.scale(1, 3)], {})) == "module.orders.terraform_data.stream_group scales stream orders from 1 to 3 shards (+2 shards, a factor of 3 up), over the limits of 4 shards and a factor of 2 per change"
}

test_factor_over_limit_down_denied if {
	msg := only_msg(deny_for([f.scale(8, 3)], {}))
	contains(msg, "from 8 to 3 shards (-5 shards, a factor of 2.67 down)")
}

test_factor_alone_down_denied if {
	# 5 -> 2 removes only 3 shards but by a factor of 2.5.
	contains(only_msg(deny_for([f.scale(5, 2)], {})), "a factor of 2.5 down")
}

test_finding_fields if {
	found := deny_for([f.scale(2, 9)], {})
	found == {{
		"msg": only_msg(found),
		"stream": f.key("orders"),
		"stream_prefix": "orders",
		"consumer_group": "billing",
		"address": "module.orders.terraform_data.stream_group",
	}}
}

# The rule bounds the judged change: shards_before is the live count wherever the
# engine read one (policy/effect.go), so live state itself is not looked at here.
test_judged_before_is_used_not_live_state if {
	live := f.live({"orders": [f.live_group("billing", 16)]})
	contains(only_msg(deny_for([f.scale(2, 8)], live)), "from 2 to 8 shards (+6 shards, a factor of 4 up)")
}

test_unknown_after_skipped if {
	count(deny_for([f.scale(4, null)], {})) == 0
	count(shard_delta.warn) == 0 with input as {"changes": [f.scale(4, null)]}
}

test_unknown_before_not_denied_but_warned if {
	count(deny_for([f.scale(null, 40)], {})) == 0
	found := shard_delta.warn with input as {"changes": [f.scale(null, 40)], "config": f.default_config}
	found == {{
		"msg": "module.orders.terraform_data.stream_group scales stream orders from an unknown shard count to 40 shards: the delta could not be bounded against the limits of 4 shards and a factor of 2 per change; check the stream's live shard count on the coordinator before applying",
		"stream": f.key("orders"),
		"stream_prefix": "orders",
		"consumer_group": "billing",
		"address": "module.orders.terraform_data.stream_group",
	}}
}

test_tainted_retry_from_unknown_count_warned if {
	c := f.change({"action": "scale", "shards_before": null, "prior_shards": 5, "shards_after": 5, "tainted": true, "action_reason": "replace_because_tainted"})
	found := shard_delta.warn with input as {"changes": [c]}
	some v in found
	contains(v.msg, "from an unknown shard count to 5 shards: the delta could not be bounded")
}

test_unknown_both_warned if {
	found := shard_delta.warn with input as {"changes": [f.scale(null, null)]}
	some v in found
	contains(v.msg, "from an unknown shard count to an unknown shard count")
}

test_known_before_not_warned if {
	count(shard_delta.warn) == 0 with input as {"changes": [f.scale(4, 40), f.change({"action": "create", "shards_before": null})]}
}

test_zero_counts_denied if {
	contains(only_msg(deny_for([f.scale(0, 2)], {})), "(+2 shards, from 0 shards)")
	contains(only_msg(deny_for([f.scale(2, 0)], {})), "(-2 shards, to 0 shards)")
}

test_only_scales_checked if {
	count(deny_for(
		[
			f.change({"action": "create", "shards_before": null, "shards_after": 64}),
			f.change({"action": "noop", "shards_before": 1, "shards_after": 64}),
			f.change({"action": "delete", "shards_before": 64, "shards_after": null}),
		],
		{},
	)) == 0
}

test_configured_limits if {
	config := {"max_shard_delta": 10, "max_scale_factor": 3}
	count(shard_delta.deny) == 0 with input as {"changes": [f.scale(4, 12)], "config": config}
	count(shard_delta.deny) == 1 with input as {"changes": [f.scale(4, 13)], "config": config}
}

test_fractional_factor_limit if {
	config := {"max_shard_delta": 10, "max_scale_factor": 1.5}
	found := shard_delta.deny with input as {"changes": [f.scale(4, 7)], "config": config}
	contains(only_msg(found), "a factor of 1.75 up), over the limits of 10 shards and a factor of 1.5 per change")
}

test_default_limits_without_config if {
	count(shard_delta.deny) == 0 with input as {"changes": [f.scale(4, 8)]}
	count(shard_delta.deny) == 1 with input as {"changes": [f.scale(4, 9)]}
}

test_one_finding_per_change if {
	found := deny_for(
		[
			f.scale(2, 12),
			f.change({"action": "scale", "consumer_group": "audit", "address": "module.audit.terraform_data.stream_group", "shards_before": 2, "shards_after": 12}),
		],
		{},
	)
	{v.consumer_group | some v in found} == {"billing", "audit"}
}
