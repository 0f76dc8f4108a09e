# METADATA
# title: Unknown value
# description: >-
#   Denies a change whose shard count, stream prefix, consumer group or coordinator URL
#   is unknown until apply, and a change of a coordinator resource that lacks an
#   attribute shardgate reads (docs/policy-input.md names them per type): shardgate
#   cannot check a change it cannot see. The coordinator is part of a group's identity:
#   a group whose coordinator is unknown could be any group of any coordinator. An
#   import starts from the imported object's count; one whose starting count is not
#   known (the module's terraform_data imports with no input, and the coordinator
#   was not read) is denied too.
# custom:
#   waivable: false
package shardgate.rules.unknown_value

checked_fields := {"shard_count", "stream_prefix", "consumer_group", "coordinator_base_url"}

deny contains v if {
	some c in input.changes

	# Stepping into the list finds nearly every change's empty unknown list at a
	# quarter of the cost of count(c.unknown) > 0. A change with several unknown
	# fields matches once per field, with the same finding each time.
	some f in c.unknown
	f in checked_fields
	fields := sort([g | some g in c.unknown; g in checked_fields])
	msg := sprintf(
		"%s: %s unknown until apply, so shardgate cannot check what it does to the coordinator; set it from values known at plan time",
		[c.address, concat(", ", fields)],
	)
	v := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address}
}

deny contains v if {
	some c in input.changes

	# As above: a reference into the list rather than counting it.
	c.missing[0]
	msg := sprintf(
		"%s: the %s resource lacks the %s shardgate reads to know what the change does to the coordinator, so it cannot be checked",
		[c.address, c.kind, attributes_text(c.missing)],
	)
	v := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address}
}

deny contains v if {
	some c in input.changes
	c.importing == true
	c.shards_before == null
	msg := sprintf(
		"%s: imports an object whose shard count shardgate cannot know at plan time (the import carries none and the coordinator was not read), so it cannot check what the apply does to the coordinator",
		[c.address],
	)
	v := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address}
}

attributes_text(names) := sprintf("attribute %s", [names[0]]) if count(names) == 1

else := sprintf("attributes %s", [concat(", ", sort(names))])
