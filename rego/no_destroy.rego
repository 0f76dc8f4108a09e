# METADATA
# title: No destroy
# description: >-
#   Denies a change that deletes a coordinator group (its metadata is removed from the
#   coordinator) or unmanages one (Terraform forgets a group that the coordinator keeps).
#   Removing one of two declarations of a group another instance still manages
#   (managed_by) is a move of ownership, not an unmanage.
# custom:
#   waivable: true
#   exception_label: policy-exception/no_destroy
package shardgate.rules.no_destroy

import data.shardgate.lib

deny contains v if {
	some c in lib.changes_with("delete")
	msg := sprintf(
		"%s deletes coordinator group %s/%s: the coordinator removes the group's metadata (its Redis stream keys stay, and the delete does not wait for an active migration)",
		[c.address, c.stream_prefix, c.consumer_group],
	)
	v := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address}
}

deny contains v if {
	some c in lib.changes_with("unmanage")

	# Another instance of the plan still manages the group (one of two
	# declarations removed): its ownership moves, nothing is unmanaged.
	object.get(c, "managed_by", "") == ""
	msg := sprintf(
		"%s unmanages coordinator group %s/%s: Terraform forgets the group but the coordinator keeps it (destroying the module is a no-op on the coordinator), so its shard count is no longer owned by any plan",
		[c.address, c.stream_prefix, c.consumer_group],
	)
	v := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address}
}
