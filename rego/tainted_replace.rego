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

# A change is tainted when planparse says so or when Terraform replaces it for
# being tainted: two bodies, each finding the same warning, rather than a call of
# a tainted(c) function per change, which cost OPA more than the rest of this
# rule on a plan of thousands of changes (issue 37).
warn contains warning(c) if {
	some c in input.changes
	c.tainted == true
}

warn contains warning(c) if {
	some c in input.changes
	c.action_reason == "replace_because_tainted"
}

warning(c) := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address} if {
	msg := sprintf(
		"%s is tainted: the last apply of it failed, and this plan retries it; check the stream's migration state on the coordinator before applying again",
		[c.address],
	)
}
