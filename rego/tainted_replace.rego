# METADATA
# title: Tainted replace
# description: >-
#   Warns about a change Terraform plans because the resource is tainted: the last
#   apply of it failed, e.g. on 409 ACTIVE_MIGRATION_EXISTS, and this plan retries it.
#   The retry is judged as what it does to the coordinator: a scale from the live
#   count (or from an unknown count offline), since the prior state is not trusted.
# custom:
#   waivable: false
package shardgate.rules.tainted_replace

import data.shardgate.lib

warn contains v if {
	some c in input.changes
	tainted(c)
	msg := sprintf(
		"%s is tainted: the last apply of it failed, and this plan retries it; check the stream's migration state on the coordinator before applying again",
		[c.address],
	)
	v := lib.finding(c, msg)
}

tainted(c) if c.tainted == true

tainted(c) if c.action_reason == "replace_because_tainted"
