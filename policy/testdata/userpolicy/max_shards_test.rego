# Loaded by `opa test`, never by the engine: were it evaluated, max_shards_test
# would show up as a rule.
package shardgate.rules.max_shards_test

import data.shardgate.rules.max_shards

test_over_limit_denied if {
	count(max_shards.deny) == 1 with input as {"changes": [{"address": "a", "action": "scale", "shards_after": 33, "stream_prefix": "s", "consumer_group": "g"}]}
}

test_at_limit_allowed if {
	count(max_shards.deny) == 0 with input as {"changes": [{"address": "a", "action": "scale", "shards_after": 32, "stream_prefix": "s", "consumer_group": "g"}]}
}
