# METADATA
# title: Maximum shard count
# description: No stream may have more than 32 shards.
# custom:
#   waivable: true
#   exception_label: policy-exception/max_shards
package shardgate.rules.max_shards

deny contains v if {
	some c in input.changes
	c.action in {"create", "scale"}
	c.shards_after > 32
	v := {
		"msg": sprintf("%s asks for %d shards; the limit is 32", [c.address, c.shards_after]),
		"stream_prefix": c.stream_prefix,
		"consumer_group": c.consumer_group,
		"address": c.address,
	}
}
