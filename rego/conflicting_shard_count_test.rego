package shardgate.rules.conflicting_shard_count_test

import data.shardgate.rules.conflicting_shard_count as conflict

test_different_counts_denied if {
	desired := {"orders": {"10": ["module.c"], "4": ["module.b", "module.a"]}}
	found := conflict.deny with input as {"desired": desired}
	found == {{
		"msg": "stream orders is asked for 2 different shard counts: 4 shards (module.a, module.b); 10 shards (module.c); the stream's groups share one shard count, so give it a single owner",
		"stream_prefix": "orders",
		"consumer_group": "",
		"address": "",
	}}
}

test_one_count_allowed if {
	count(conflict.deny) == 0 with input as {"desired": {"orders": {"8": ["module.a", "module.b"]}}}
}

test_only_conflicting_streams_reported if {
	desired := {
		"orders": {"8": ["module.a"]},
		"payments": {"2": ["module.p"], "3": ["module.q"], "5": ["module.r"]},
	}
	found := conflict.deny with input as {"desired": desired}
	count(found) == 1
	some v in found
	v.stream_prefix == "payments"
	contains(v.msg, "3 different shard counts: 2 shards (module.p); 3 shards (module.q); 5 shards (module.r)")
}

test_no_desired_allowed if {
	count(conflict.deny) == 0 with input as {}
	count(conflict.deny) == 0 with input as {"desired": {}}
}
