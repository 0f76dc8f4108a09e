# METADATA
# title: Invalid shard count
# description: >-
#   Denies a change whose planned shard count is not a whole number >= 1 (4.5, 0,
#   -2): the stream-group module accepts a fractional count, but the coordinator
#   cannot have one, and its apply would fail part way.
# custom:
#   waivable: false
package shardgate.rules.invalid_shard_count

deny contains v if {
	some c in input.changes
	c.invalid_shard_count != ""
	msg := sprintf(
		"%s asks for shard_count %s: a shard count must be a whole number >= 1",
		[c.address, value_text(c.invalid_shard_count)],
	)
	v := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address}
}

# value_text quotes the value as the plan wrote it; a sensitive one is never shown
# (planparse writes "(sensitive)" instead).
value_text(value) := "(a sensitive value)" if value == "(sensitive)"

else := sprintf("%q", [value])
