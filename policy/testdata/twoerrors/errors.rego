# Two rule packages that fail at evaluation, with different errors: the one
# reported is the first package's by id, however the packages are scheduled.
package shardgate.rules.a_boom

deny contains v if {
	some c in input.changes
	v := {"msg": sprintf("%d", [to_number(concat("", ["first:", c.address]))])}
}
