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

# changes_with lists the changes of one action. The engine indexes input.changes by
# action (input.changes_by_action, every action a key, empty or not) so that a rule
# about scales steps through the scales only; an input without the index, such as
# a unit test's, is filtered here instead. Call it once, before a loop.
changes_with(action) := input.changes_by_action[action] if {
	input.changes_by_action
} else := [c | some c in input.changes; c.action == action]

# current_shards is the shard count a scale starts from, null when unknown. Live
# coordinator state wins over the plan: the plan's "before" is what Terraform last
# applied, and another module or an operator may have scaled the stream since
# (coordinator.md §4). A group the coordinator does not have yet starts from the
# stream's largest group. shard_counts and max_shard_count are indexes the engine
# adds to input.live, so this is two lookups rather than a walk over the groups.
# Plain references in an else chain cost a third of object.get with a path, which
# builds its path array on every call.
current_shards(c) := n if {
	n := input.live[c.stream_prefix].shard_counts[c.consumer_group]
} else := n if {
	n := input.live[c.stream_prefix].max_shard_count
} else := c.shards_before

# scales_out holds for a scale that adds shards to what the stream has now.
scales_out(c) if {
	c.action == "scale"
	is_number(c.shards_after)
	before := current_shards(c)
	is_number(before)
	c.shards_after > before
}

# scaled_out_streams are the stream prefixes the plan scales out. Helper rules live
# here rather than in a rule package: the engine evaluates every rule of every rule
# package, while these are computed only when a rule asks.
scaled_out_streams contains c.stream_prefix if {
	some c in changes_with("scale")
	scales_out(c)
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
