# METADATA
# title: Tainted replace
# description: >-
#   Warns about a change Terraform plans because the resource is tainted: the last
#   apply of it failed, e.g. on 409 ACTIVE_MIGRATION_EXISTS, and this plan retries it.
# custom:
#   waivable: false
package shardgate.rules.tainted_replace

import data.shardgate.lib

warn contains v if {
	some c in input.changes
	c.action_reason == "replace_because_tainted"
	msg := sprintf(
		"%s is tainted: the last apply of it failed, and this plan retries it; check the stream's migration state on the coordinator before applying again",
		[c.address],
	)
	v := lib.finding(c, msg)
}
