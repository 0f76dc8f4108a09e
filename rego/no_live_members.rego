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

scaled_out contains c.stream_prefix if {
	some c in input.changes
	lib.scales_out(c)
}

warn contains v if {
	some prefix in scaled_out
	some g in input.live[prefix].groups
	g.live_members == 0
	msg := sprintf(
		"stream %s is scaled out but its group %s has no live members: the migration would never leave ACTIVE and would block every later scale until rolled back; deploy the group's consumers first",
		[prefix, g.consumer_group],
	)
	v := lib.stream_finding(prefix, g.consumer_group, msg)
}
