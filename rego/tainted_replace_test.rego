package shardgate.rules.tainted_replace_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.tainted_replace as tainted

test_tainted_replace_warns if {
	c := f.change({"action": "scale", "action_reason": "replace_because_tainted"})
	found := tainted.warn with input as {"changes": [c]}
	count(found) == 1
	some v in found
	v.address == "module.orders.terraform_data.stream_group"
	contains(v.msg, "is tainted: the last apply of it failed")
}

test_other_reasons_quiet if {
	count(tainted.warn) == 0 with input as {"changes": [f.scale(4, 8), f.change({"action": "delete", "action_reason": ""})]}
}

test_tainted_flag_warns if {
	c := f.change({"action": "scale", "tainted": true, "shards_before": null, "prior_shards": 5, "shards_after": 5})
	found := tainted.warn with input as {"changes": [c]}
	count(found) == 1
}
