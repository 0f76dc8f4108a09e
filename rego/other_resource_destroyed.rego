# METADATA
# title: Other resource destroyed
# description: >-
#   Warns about every resource that is not a coordinator group which the plan
#   destroys, or destroys and creates again (a replace): shardgate shows these but
#   does not judge them. A policy of your own can deny them from
#   input.other_changes.
# custom:
#   waivable: false
package shardgate.rules.other_resource_destroyed

warn contains v if {
	some o in input.other_changes
	"delete" in o.actions
	msg := sprintf("%s (%s) %s", [o.address, o.type, what(o.actions)])
	v := {"msg": msg, "stream_prefix": "", "consumer_group": "", "address": o.address}
}

what(actions) := "is replaced: Terraform destroys it and creates it again" if "create" in actions

else := "is destroyed"
