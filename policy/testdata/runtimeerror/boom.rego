# to_number fails on an address; with strict built-in errors that is an
# evaluation error, which must deny the plan rather than skip the rule.
package shardgate.rules.boom

deny contains v if {
	some c in input.changes
	v := {"msg": sprintf("%d", [to_number(c.address)])}
}
