# METADATA
# title: shardgate helpers
# description: Helpers shared by shardgate's built-in rules. Not a rule.
package shardgate.lib

# finding is the shape every deny/warn value of a built-in rule has. The rules
# about one change build it in place, {"msg": msg, "stream": c.stream, ...}: a call
# of this function per finding cost OPA more than the rest of the finding on a
# plan of thousands of changes (issue 37). Keep the two in step.
finding(c, msg) := {
	"msg": msg,
	"stream": c.stream,
	"stream_prefix": c.stream_prefix,
	"consumer_group": c.consumer_group,
	"address": c.address,
}

# stream_finding is a finding about a whole stream (a stream key) rather than one
# change; "" is about no stream.
stream_finding(stream, group, msg) := {
	"msg": msg,
	"stream": stream,
	"stream_prefix": stream_prefix(stream),
	"consumer_group": group,
	"address": "",
}

# stream_prefix is a stream key's prefix, stream_name what a message calls the
# stream: its prefix, with its coordinator when two streams of the input share the
# prefix. The engine writes both in input.streams; a key it did not write is split
# like planparse.SplitStreamKey splits it.
stream_prefix(stream) := prefix if {
	prefix := input.streams[stream].stream_prefix
} else := split_stream(stream)[1]

stream_name(stream) := name if {
	name := input.streams[stream].name
} else := split_stream(stream)[1]

split_stream(stream) := [substring(stream, 0, i), substring(stream, i + 1, -1)] if {
	i := indexof(stream, " ")
	i > 0
	contains(substring(stream, 0, i), "://")
} else := ["", stream]

# changes_with lists the changes of one action. The engine indexes input.changes by
# action (input.changes_by_action, every action a key, empty or not) so that a rule
# about scales steps through the scales only; an input without the index, such as
# a unit test's, is filtered here instead. Call it once, before a loop.
changes_with(action) := input.changes_by_action[action] if {
	input.changes_by_action
} else := [c | some c in input.changes; c.action == action]

# scale_changes are the plan's scales, changes_with("scale") as a rule: a rule
# iterating them in a comprehension can have it indexed (quiesce_attestation).
scale_changes := changes_with("scale")

# stream_changes lists the changes of one stream (a stream key), from the engine's
# input.changes_by_stream index: a rule about streams then looks at each change
# once in all, not once per stream. Without the index (a unit test's input) they
# are filtered from input.changes.
stream_changes(stream) := changes if {
	changes := input.changes_by_stream[stream]
} else := [] if {
	input.changes_by_stream
} else := [c | some c in input.changes; c.stream == stream]

# current_shards is the shard count a scale starts from, null when unknown. The
# engine has already put the live coordinator count of the group into
# shards_before where it read one (docs/policy-input.md, "Effect"): the plan's
# "before" is only what Terraform last applied.
current_shards(c) := c.shards_before

# scales_out holds for a scale that adds shards to what the stream has now.
scales_out(c) if {
	c.action == "scale"
	is_number(c.shards_after)
	is_number(c.shards_before)
	c.shards_after > c.shards_before
}

# scaled_out_streams are the streams (stream keys) the plan scales out. Helper
# rules live here rather than in a rule package: the engine evaluates every rule
# of every rule package, while these are computed only when a rule asks.
scaled_out_streams contains c.stream if {
	some c in changes_with("scale")
	scales_out(c)
}

# changed_streams are the streams (stream keys) whose coordinator state the plan
# changes. A move is left out: the coordinator ends where it started.
changed_streams contains c.stream if {
	some c in input.changes
	c.action != "move"
}

# addresses lists at most five addresses, sorted, so a message stays readable on a
# plan with thousands of instances.
addresses(addrs) := concat(", ", sorted) if {
	count(addrs) <= 5
	sorted := sort(addrs)
} else := sprintf("%s and %d more", [concat(", ", array.slice(sort(addrs), 0, 5)), count(addrs) - 5])
