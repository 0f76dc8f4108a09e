# METADATA
# title: Drift
# description: >-
#   Warns about an instance the plan leaves alone (unchanged, or moved to another
#   address) while the coordinator has another shard count than the code asks for:
#   someone scaled the stream outside Terraform, or another module owns it. The
#   plan applies nothing, so the difference stays; it is shown, never hidden.
# custom:
#   waivable: false
package shardgate.rules.drift

import data.shardgate.lib

# input.drift lists those instances, found by the engine from live state; their
# shards_before is the live count, shards_after the code's.
warn contains v if {
	some c in input.drift
	msg := sprintf(
		"%s asks for %d shards but the coordinator has %d for %s/%s, and this plan applies nothing there: set shard_count to %d to match the coordinator, or have the code's count applied as a scale through the gate (terraform taint the instance, then plan it in a pull request)",
		[c.address, c.shards_after, c.shards_before, lib.stream_name(c.stream), c.consumer_group, c.shards_before],
	)
	v := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address}
}
