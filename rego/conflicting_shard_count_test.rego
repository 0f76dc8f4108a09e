package shardgate.rules.conflicting_shard_count_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.conflicting_shard_count as conflict

test_different_counts_denied if {
	desired := {f.key("orders"): {"10": ["module.c"], "4": ["module.b", "module.a"]}}
	found := conflict.deny with input as {"desired": desired}
	found == {{
		"msg": "stream orders is asked for 2 different shard counts: 4 shards (module.a, module.b); 10 shards (module.c); the stream's groups share one shard count, so give it a single owner",
		"stream": f.key("orders"),
		"stream_prefix": "orders",
		"consumer_group": "",
		"address": "",
	}}
}

test_one_count_allowed if {
	count(conflict.deny) == 0 with input as {"desired": {f.key("orders"): {"8": ["module.a", "module.b"]}}}
}

test_only_conflicting_streams_reported if {
	desired := {
		f.key("orders"): {"8": ["module.a"]},
		f.key("payments"): {"2": ["module.p"], "3": ["module.q"], "5": ["module.r"]},
	}
	found := conflict.deny with input as {"desired": desired}
	count(found) == 1
	some v in found
	v.stream_prefix == "payments"
	contains(v.msg, "3 different shard counts: 2 shards (module.p); 3 shards (module.q); 5 shards (module.r)")
}

# Two coordinators with one prefix are two streams: their counts never conflict.
test_same_prefix_on_two_coordinators_is_two_streams if {
	desired := {
		"http://a:8080 orders": {"4": ["module.a"]},
		"http://b:8080 orders": {"8": ["module.b"]},
	}
	count(conflict.deny) == 0 with input as {"desired": desired}
}

# When two streams share a prefix, the message names the coordinator too.
test_shared_prefix_named_with_coordinator if {
	desired := {
		"http://a:8080 orders": {"4": ["module.a"], "6": ["module.c"]},
		"http://b:8080 orders": {"8": ["module.b"]},
	}
	streams := {
		"http://a:8080 orders": {"coordinator": "http://a:8080", "stream_prefix": "orders", "name": "orders on http://a:8080"},
		"http://b:8080 orders": {"coordinator": "http://b:8080", "stream_prefix": "orders", "name": "orders on http://b:8080"},
	}
	found := conflict.deny with input as {"desired": desired, "streams": streams}
	count(found) == 1
	some v in found
	v.stream == "http://a:8080 orders"
	v.stream_prefix == "orders"
	startswith(v.msg, "stream orders on http://a:8080 is asked for 2 different shard counts")
}

test_no_desired_allowed if {
	count(conflict.deny) == 0 with input as {}
	count(conflict.deny) == 0 with input as {"desired": {}}
}
