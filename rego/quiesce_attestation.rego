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
	some c in lib.changes_with("scale")
}

# attested holds the prefixes of the scaled streams a fresh attestation covers; the
# engine reports the attestations behind them as used.
attested contains prefix if {
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
	not tolerant(prefix)

	# The stream's own changes, from the engine's index: scanning every scale of
	# the plan for each unattested stream made a denied plan quadratic.
	addrs := [c.address | some c in lib.stream_changes(stream); c.action == "scale"]

	# How to attest is the report's job: it knows who may and through which channel.
	msg := sprintf(
		"scaling stream %s (%s) routes partition keys to other shards: pause its producers and drain their in-flight retries first (or list the stream under streams.duplicate_tolerant in .shardgate.yaml if its consumers tolerate duplicates)",
		[lib.stream_name(stream), lib.addresses(addrs)],
	)
	v := lib.stream_finding(stream, "", msg)
}
