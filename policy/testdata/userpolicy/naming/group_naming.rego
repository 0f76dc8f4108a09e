# No METADATA: the rule cannot be waived.
package shardgate.rules.group_naming

deny contains v if {
	some c in input.changes
	c.action == "create"
	not regex.match(`^[a-z][a-z0-9-]*$`, c.consumer_group)
	v := {
		"msg": sprintf("consumer group %q must be lower-case letters, digits and dashes", [c.consumer_group]),
		"stream_prefix": c.stream_prefix,
		"consumer_group": c.consumer_group,
		"address": c.address,
	}
}

warn contains v if {
	some c in input.changes
	c.action == "create"
	c.shards_after == 1
	v := {"msg": sprintf("%s starts with a single shard", [c.address])}
}
