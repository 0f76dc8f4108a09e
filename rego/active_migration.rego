# METADATA
# title: Active migration
# description: >-
#   Warns when live coordinator state shows an active migration on a stream the plan
#   changes: the coordinator rejects a scale while any group of the stream migrates,
#   so the apply waits for the migration to finish.
# custom:
#   waivable: false
package shardgate.rules.active_migration

import data.shardgate.lib

# input.live is keyed by stream key, like the changes' stream field.
warn contains v if {
	some key, stream in input.live
	some g in stream.groups
	id := g.active_migration_id
	id != ""
	lib.changed_streams[key]
	msg := sprintf(
		"group %s/%s has active migration %s (%s): the apply waits for it to finish before changing the stream",
		[lib.stream_name(key), g.consumer_group, id, state_text(object.get(g, "migration_state", ""))],
	)
	v := lib.stream_finding(key, g.consumer_group, msg)
}

state_text(state) := state if state != ""

else := "state unknown"
