# METADATA
# title: shardgate helpers
# description: Helpers shared by shardgate's built-in rules. Not a rule.
package shardgate.lib

# finding is the shape every deny/warn value of a built-in rule has.
finding(c, msg) := {
	"msg": msg,
	"stream_prefix": c.stream_prefix,
	"consumer_group": c.consumer_group,
	"address": c.address,
}

# stream_finding is a finding about a whole stream prefix rather than one change.
stream_finding(prefix, group, msg) := {
	"msg": msg,
	"stream_prefix": prefix,
	"consumer_group": group,
	"address": "",
}

# current_shards is the shard count a scale starts from. Live coordinator state wins
# over the plan: the plan's "before" is what Terraform last applied, and another
# module or an operator may have scaled the stream since (coordinator.md §4).
current_shards(c) := n if {
	same := [g.shard_count | some g in input.live[c.stream_prefix].groups; g.consumer_group == c.consumer_group]
	count(same) > 0
	n := max(same)
} else := n if {
	counts := [g.shard_count | some g in input.live[c.stream_prefix].groups]
	count(counts) > 0
	n := max(counts)
} else := c.shards_before if {
	is_number(c.shards_before)
}

# scales_out holds for a scale that adds shards to what the stream has now.
scales_out(c) if {
	c.action == "scale"
	is_number(c.shards_after)
	c.shards_after > current_shards(c)
}

# changed_streams are the stream prefixes the plan changes.
changed_streams contains c.stream_prefix if {
	some c in input.changes
}

# addresses lists at most five addresses, sorted, so a message stays readable on a
# plan with thousands of instances.
addresses(addrs) := concat(", ", sorted) if {
	count(addrs) <= 5
	sorted := sort(addrs)
} else := sprintf("%s and %d more", [concat(", ", array.slice(sort(addrs), 0, 5)), count(addrs) - 5])
