# METADATA
# title: Shard delta
# description: >-
#   Denies a scale that adds or removes more than max_shard_delta shards (default 4) or
#   changes the shard count by more than max_scale_factor (default 2) in either
#   direction. The count a scale starts from is the live coordinator count when it
#   was read, else the prior state's when it is trustworthy; a scale from an unknown
#   count (offline, a tainted retry) is a warning that its delta could not be bounded.
# custom:
#   waivable: true
#   exception_label: policy-exception/shard_delta
package shardgate.rules.shard_delta

import data.shardgate.lib

max_delta := object.get(input, ["config", "max_shard_delta"], 4)

max_factor := object.get(input, ["config", "max_scale_factor"], 2)

deny contains v if {
	# Read the limits once, before the loop, not once per change.
	delta_limit := max_delta
	factor_limit := max_factor
	some c in lib.changes_with("scale")
	after := c.shards_after
	is_number(after)
	before := c.shards_before
	is_number(before)
	not within_limits(before, after, delta_limit, factor_limit)

	msg := sprintf(
		"%s scales stream %s from %d to %d shards (%+d shards, %s), over the limits of %v shards and a factor of %v per change",
		[c.address, lib.stream_name(c.stream), before, after, after - before, factor_text(before, after), delta_limit, factor_limit],
	)
	v := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address}
}

# A scale whose starting count nobody knows (the coordinator was not read and the
# prior state is missing or untrusted, as a tainted instance's is) cannot be
# bounded: it is not passed silently. The attestation still applies to it.
warn contains v if {
	some c in lib.changes_with("scale")
	c.shards_before == null
	msg := sprintf(
		"%s scales stream %s from an unknown shard count to %s: the delta could not be bounded against the limits of %v shards and a factor of %v per change; check the stream's live shard count on the coordinator before applying",
		[c.address, lib.stream_name(c.stream), after_text(c.shards_after), max_delta, max_factor],
	)
	v := {"msg": msg, "stream": c.stream, "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group, "address": c.address}
}

after_text(after) := sprintf("%d shards", [after]) if is_number(after)

else := "an unknown shard count"

# within_limits holds for a scale by at most delta shards and at most the factor in
# either direction. Multiplying rather than dividing also covers a stream at 0
# shards (retired through the API), whose factor is infinite. A plan can hold
# thousands of scales: one chain of comparisons here costs a fraction of testing
# `true in [...]` over the three limits.
within_limits(before, after, delta, factor) if {
	abs(after - before) <= delta
	after <= before * factor
	before <= after * factor
}

# factor_text rounds the factor to two decimals; a division that comes out whole
# prints without decimals.
factor_text(before, after) := "from 0 shards" if {
	before == 0
} else := "to 0 shards" if {
	after == 0
} else := sprintf("a factor of %v up", [round((after * 100) / before) / 100]) if {
	after >= before
} else := sprintf("a factor of %v down", [round((before * 100) / after) / 100])
