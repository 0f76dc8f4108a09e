package shardgate.rules.no_msg

deny contains v if {
	some c in input.changes
	v := {"stream_prefix": c.stream_prefix}
}
