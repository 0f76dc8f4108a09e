package shardgate.rules.coordinator_unreachable_test

import data.shardgate.rules.coordinator_unreachable as unreachable

test_unreachable_denied if {
	found := unreachable.deny with input as {"coordinator": {"consulted": true, "reachable": false, "error": "GET /monitoring/groups: connection refused"}}
	found == {{
		"msg": "the coordinator could not be read (GET /monitoring/groups: connection refused); shardgate does not pass a plan without live coordinator state",
		"stream": "",
		"stream_prefix": "",
		"consumer_group": "",
		"address": "",
	}}
}

test_unreachable_without_reason_denied if {
	found := unreachable.deny with input as {"coordinator": {"consulted": true, "reachable": false}}
	some v in found
	contains(v.msg, "(no reason given)")
}

test_reachable_allowed if {
	count(unreachable.deny) == 0 with input as {"coordinator": {"consulted": true, "reachable": true}}
}

test_not_consulted_allowed if {
	count(unreachable.deny) == 0 with input as {"coordinator": {"consulted": false, "reachable": false}}
	count(unreachable.deny) == 0 with input as {}
}
