package shardgate.rules.string_deny

deny contains msg if {
	some c in input.changes
	msg := sprintf("%s is bad", [c.address])
}
