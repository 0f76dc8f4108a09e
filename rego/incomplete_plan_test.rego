package shardgate.rules.incomplete_plan_test

import data.shardgate.rules.incomplete_plan as incomplete

test_incomplete_plan_warns if {
	found := incomplete.warn with input as {"incomplete": true}
	count(found) == 1
	some v in found
	contains(v.msg, "more changes follow in a later plan")
}

test_complete_plan_quiet if {
	count(incomplete.warn) == 0 with input as {"incomplete": false}
	count(incomplete.warn) == 0 with input as {}
}
