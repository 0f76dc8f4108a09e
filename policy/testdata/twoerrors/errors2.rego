package shardgate.rules.z_boom

deny contains v if {
	some c in input.changes
	v := {"msg": sprintf("%d", [to_number(concat("", ["second:", c.address]))])}
}
