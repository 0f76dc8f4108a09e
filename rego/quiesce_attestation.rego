# METADATA
# title: Producer-quiesce attestation
# description: >-
#   Denies a scale of a stream without a fresh producer-quiesce attestation for its
#   prefix, unless the configuration lists the prefix as duplicate tolerant. A scale
#   moves partition keys to other shards; producers that are not paused, with
#   in-flight retries, can then write duplicates. Every scale counts: one from an
#   unknown count and a tainted retry too. An attestation names a prefix and covers
#   that prefix on every coordinator.
# custom:
#   waivable: true
#   exception_label: policy-exception/quiesce_attestation
package shardgate.rules.quiesce_attestation

import data.shardgate.lib

# scaled are the streams (stream keys) the plan scales. A scale is stream-level, so
# one finding per stream, however many groups of it the plan touches.
scaled contains c.stream if {
	some c in lib.scale_changes
}

# attested holds the prefixes of the scaled streams a fresh attestation covers; the
# engine reports the attestations behind them as used.
attested contains prefix if {
	# Nothing is attested on most plans: the prefix of every scaled stream is
	# then not worth computing.
	count(input.attested_streams) > 0
	some stream in scaled
	prefix := lib.stream_prefix(stream)
	input.attested_streams[prefix]
	not tolerant(prefix)
}

tolerant(prefix) if input.config.duplicate_tolerant_streams[prefix]

deny contains v if {
	some stream in scaled
	prefix := lib.stream_prefix(stream)
	not input.attested_streams[prefix]
	not input.config.duplicate_tolerant_streams[prefix]

	# The stream's scales. Unifying (=) rather than comparing lets OPA index the
	# comprehension: it groups the plan's scales by stream once, where scanning
	# them for each unattested stream made a denied plan quadratic, and a lookup
	# costs less than a call of lib.stream_changes on a plan of one stream per
	# instance.
	addrs := [c.address | some c in lib.scale_changes; c.stream = stream]

	# How to attest is the report's job: it knows who may and through which channel.
	msg := sprintf(
		"scaling stream %s (%s) routes partition keys to other shards: pause its producers and drain their in-flight retries first (or list the stream under streams.duplicate_tolerant in .shardgate.yaml if its consumers tolerate duplicates)",
		[lib.stream_name(stream), lib.addresses(addrs)],
	)

	# lib.stream_finding(stream, "", msg), with the prefix already at hand.
	v := {"msg": msg, "stream": stream, "stream_prefix": prefix, "consumer_group": "", "address": ""}
}
