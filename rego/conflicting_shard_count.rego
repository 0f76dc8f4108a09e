# METADATA
# title: Conflicting shard count
# description: >-
#   Denies a plan in which instances of one stream (one prefix on one coordinator)
#   ask for different shard counts, unchanged instances included. A scale is stream-level, so whichever
#   applies last wins for every group of the stream, and the loser's plan never shows
#   the drift (coordinator.md §4).
# custom:
#   waivable: false
package shardgate.rules.conflicting_shard_count

import data.shardgate.lib

# input.desired maps a stream key to its shard counts (as strings) and the
# addresses asking for each: one lookup per stream, never a walk of the changes.
deny contains v if {
	some stream, by_count in input.desired
	count(by_count) > 1
	parts := [sprintf("%s shards (%s)", [k, lib.addresses(by_count[k])]) |
		some n in sort([to_number(k) | some k, _ in by_count])
		k := format_int(n, 10)
	]
	msg := sprintf(
		"stream %s is asked for %d different shard counts: %s; the stream's groups share one shard count, so give it a single owner",
		[lib.stream_name(stream), count(by_count), concat("; ", parts)],
	)
	v := lib.stream_finding(stream, "", msg)
}
