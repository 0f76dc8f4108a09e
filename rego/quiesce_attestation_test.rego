package shardgate.rules.quiesce_attestation_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.quiesce_attestation as q

two_groups := [
	f.scale(4, 8),
	f.change({"action": "scale", "consumer_group": "audit", "address": "module.audit.terraform_data.stream_group", "shards_before": 4, "shards_after": 8}),
]

test_scale_without_attestation_denied_once_per_stream if {
	found := q.deny with input as {"changes": two_groups, "attested_streams": {}, "config": f.default_config}
	count(found) == 1
	some v in found
	v.stream_prefix == "orders"
	v.consumer_group == ""
	v.address == ""
	startswith(v.msg, "scaling stream orders (module.audit.terraform_data.stream_group, module.orders.terraform_data.stream_group) routes partition keys to other shards")
	endswith(v.msg, "other shards: pause its producers and drain their in-flight retries first (or list the stream in duplicate_tolerant_streams if its consumers tolerate duplicates)")
	not contains(v.msg, "/shardgate")
}

test_attested_stream_allowed if {
	input_doc := {"changes": two_groups, "attested_streams": {"orders": true}, "config": f.default_config}
	count(q.deny) == 0 with input as input_doc
	q.attested == {"orders"} with input as input_doc
}

test_attestation_of_other_stream_does_not_count if {
	input_doc := {"changes": two_groups, "attested_streams": {"payments": true}, "config": f.default_config}
	count(q.deny) == 1 with input as input_doc
	count(q.attested) == 0 with input as input_doc
}

test_duplicate_tolerant_stream_allowed if {
	config := object.union(f.default_config, {"duplicate_tolerant_streams": {"orders": true}})
	input_doc := {"changes": two_groups, "attested_streams": {"orders": true}, "config": config}
	count(q.deny) == 0 with input as input_doc

	# The attestation was not needed, so it is not reported as used.
	count(q.attested) == 0 with input as input_doc
}

test_each_stream_needs_its_own_attestation if {
	changes := array.concat(two_groups, [f.change({"action": "scale", "stream_prefix": "payments", "address": "module.payments.terraform_data.stream_group", "shards_before": 2, "shards_after": 3})])
	found := q.deny with input as {"changes": changes, "attested_streams": {"orders": true}}
	{v.stream_prefix | some v in found} == {"payments"}
}

test_non_scale_changes_need_no_attestation if {
	count(q.deny) == 0 with input as {"changes": [
		f.change({"action": "create", "shards_before": null}),
		f.change({"action": "delete", "shards_after": null}),
		f.change({"action": "unmanage", "shards_after": null}),
		f.change({"action": "update"}),
		f.change({"action": "noop"}),
	]}
}

test_many_groups_listed_briefly if {
	changes := [c |
		some i in numbers.range(1, 7)
		c := f.change({"action": "scale", "address": sprintf("module.g%d.terraform_data.stream_group", [i]), "consumer_group": sprintf("g%d", [i])})
	]
	found := q.deny with input as {"changes": changes}
	some v in found
	contains(v.msg, "module.g5.terraform_data.stream_group and 2 more)")
}
