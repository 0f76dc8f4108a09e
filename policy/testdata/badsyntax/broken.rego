package shardgate.rules.broken

deny contains v if {
	some c in input.changes
	v := {"msg": c.address
}
