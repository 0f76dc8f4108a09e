package shardgate.rules.metadata_version_regressed_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.metadata_version_regressed as regressed

test_regressed_warns if {
	live := {
		f.key("orders"): {"stream_prefix": "orders", "groups": [f.live_group("billing", 4)], "metadata_version_regressed": true},
		f.key("payments"): {"stream_prefix": "payments", "groups": [], "metadata_version_regressed": false},
	}
	found := regressed.warn with input as {"live": live}
	count(found) == 1
	some v in found
	v.stream == f.key("orders")
	v.stream_prefix == "orders"
	contains(v.msg, "for stream orders went backwards")
}

test_not_regressed_quiet if {
	live := {f.key("orders"): {"stream_prefix": "orders", "groups": []}}
	count(regressed.warn) == 0 with input as {"live": live}
	count(regressed.warn) == 0 with input as {}
}
