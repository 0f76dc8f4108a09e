# METADATA
# title: Producer-quiesce attestation
# description: >-
#   Denies a scale of a stream prefix without a fresh producer-quiesce attestation for
#   that prefix, unless the configuration lists the prefix as duplicate tolerant. A
#   scale moves partition keys to other shards; producers that are not paused, with
#   in-flight retries, can then write duplicates.
# custom:
#   waivable: true
#   exception_label: policy-exception/quiesce_attestation
package shardgate.rules.quiesce_attestation

import data.shardgate.lib

# scaled are the stream prefixes the plan scales. A scale is stream-level, so one
# finding per prefix, however many groups of it the plan touches.
scaled contains c.stream_prefix if {
	some c in lib.changes_with("scale")
}

# attested holds the scaled prefixes a fresh attestation covers; the engine reports
# the attestations behind them as used.
attested contains prefix if {
	some prefix in scaled
	input.attested_streams[prefix]
	not tolerant(prefix)
}

tolerant(prefix) if input.config.duplicate_tolerant_streams[prefix]

deny contains v if {
	scales := lib.changes_with("scale")
	some prefix in scaled
	not input.attested_streams[prefix]
	not tolerant(prefix)
	addrs := [c.address | some c in scales; c.stream_prefix == prefix]

	# How to attest is the report's job: it knows who may and through which channel.
	msg := sprintf(
		"scaling stream %s (%s) routes partition keys to other shards: pause its producers and drain their in-flight retries first (or list the stream in duplicate_tolerant_streams if its consumers tolerate duplicates)",
		[prefix, lib.addresses(addrs)],
	)
	v := lib.stream_finding(prefix, "", msg)
}
