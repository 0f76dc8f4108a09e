# METADATA
# title: Metadata version regressed
# description: >-
#   Warns when a stream's coordinator metadataVersion went backwards since shardgate
#   last read it, a sign that Redis was restored from older data.
# custom:
#   waivable: false
package shardgate.rules.metadata_version_regressed

import data.shardgate.lib

warn contains v if {
	some key, stream in input.live
	stream.metadata_version_regressed == true
	msg := sprintf(
		"the coordinator's metadataVersion for stream %s went backwards since shardgate last read it: Redis may have been restored from older data; stop admin changes to the stream until that is understood",
		[lib.stream_name(key)],
	)
	v := lib.stream_finding(key, "", msg)
}
