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
# compute a scale's starting count here, and when some are idle, the scaled-out
# streams are computed once rather than once per idle group.
warn contains v if {
	idle := [[key, g.consumer_group] |
		some key, stream in input.live
		some g in stream.groups
		g.live_members == 0
	]
	count(idle) > 0
	streams := lib.scaled_out_streams
	some [key, group] in idle
	streams[key]
	msg := sprintf(
		"stream %s is scaled out but its group %s has no live members: the migration would never leave ACTIVE and would block every later scale until rolled back; deploy the group's consumers first",
		[lib.stream_name(key), group],
	)
	v := lib.stream_finding(key, group, msg)
}
