# METADATA
# title: Coordinator unreachable
# description: >-
#   Denies when the coordinator was consulted for live state but could not be read:
#   without live state shardgate cannot check active migrations, live members or the
#   current shard count, so it fails closed.
# custom:
#   waivable: false
package shardgate.rules.coordinator_unreachable

import data.shardgate.lib

deny contains v if {
	input.coordinator.consulted == true
	not input.coordinator.reachable == true
	reason := object.get(input.coordinator, "error", "")
	msg := sprintf("the coordinator could not be read (%s); shardgate does not pass a plan without live coordinator state", [reason_text(reason)])
	v := lib.stream_finding("", "", msg)
}

reason_text(reason) := reason if reason != ""

else := "no reason given"
