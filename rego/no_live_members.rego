# METADATA
# title: No live members
# description: >-
#   Warns when a plan scales out a stream that has a group with no live members: such
#   a migration never leaves ACTIVE, and every later scale of the stream gets 409
#   until it is rolled back (coordinator.md §2, §6.7).
# custom:
#   waivable: false
package shardgate.rules.no_live_members

import data.shardgate.lib

# Idle groups are rare, so they are looked for first: most plans then never
# compute a scale's starting count here.
warn contains v if {
	some prefix, stream in input.live
	some g in stream.groups
	g.live_members == 0
	scaled_out(prefix)
	msg := sprintf(
		"stream %s is scaled out but its group %s has no live members: the migration would never leave ACTIVE and would block every later scale until rolled back; deploy the group's consumers first",
		[prefix, g.consumer_group],
	)
	v := lib.stream_finding(prefix, g.consumer_group, msg)
}

scaled_out(prefix) if {
	some c in input.changes
	c.stream_prefix == prefix
	lib.scales_out(c)
}
