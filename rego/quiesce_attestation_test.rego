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
	endswith(v.msg, "other shards: pause its producers and drain their in-flight retries first (or list the stream under streams.duplicate_tolerant in .shardgate.yaml if its consumers tolerate duplicates)")
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

test_scale_from_unknown_count_needs_attestation if {
	found := q.deny with input as {"changes": [f.scale(null, 8)]}
	{v.stream_prefix | some v in found} == {"orders"}
}

test_tainted_retry_needs_attestation if {
	c := f.change({"action": "scale", "shards_before": null, "prior_shards": 5, "shards_after": 5, "tainted": true, "action_reason": "replace_because_tainted"})
	count(q.deny) == 1 with input as {"changes": [c]}
}

# Two coordinators with one prefix are two streams: one finding each, each
# listing its own changes, named with their coordinators.
test_same_prefix_on_two_coordinators_two_findings if {
	other := f.change({"action": "scale", "coordinator": "http://other:8080", "address": "module.other.terraform_data.stream_group", "shards_after": 8})
	streams := {
		f.key("orders"): {"coordinator": f.coordinator, "stream_prefix": "orders", "name": "orders on http://coordinator:8080"},
		"http://other:8080 orders": {"coordinator": "http://other:8080", "stream_prefix": "orders", "name": "orders on http://other:8080"},
	}
	found := q.deny with input as {"changes": [f.scale(4, 8), other], "streams": streams}
	{v.stream | some v in found} == {f.key("orders"), "http://other:8080 orders"}
	some v in found
	v.stream == "http://other:8080 orders"
	startswith(v.msg, "scaling stream orders on http://other:8080 (module.other.terraform_data.stream_group) routes")
}

# attested_streams names prefixes: an attestation covers the prefix on every
# coordinator.
test_attestation_covers_prefix_on_every_coordinator if {
	other := f.change({"action": "scale", "coordinator": "http://other:8080", "address": "module.other.terraform_data.stream_group", "shards_after": 8})
	input_doc := {"changes": [f.scale(4, 8), other], "attested_streams": {"orders": true}}
	count(q.deny) == 0 with input as input_doc
	q.attested == {"orders"} with input as input_doc
}

# With the engine's indexes, the addresses are the stream's scales only.
test_addresses_from_stream_index if {
	s := f.scale(4, 8)
	found := q.deny with input as {
		"changes": [s],
		"changes_by_action": {"scale": [s]},
		"changes_by_stream": {f.key("orders"): [s, f.change({"action": "delete", "address": "module.gone"})]},
	}
	some v in found
	contains(v.msg, "(module.orders.terraform_data.stream_group) routes")
}

# A stream's other changes (another group created) are not listed as scaling it.
test_only_scales_listed if {
	created := f.change({"action": "create", "consumer_group": "audit", "address": "module.audit.terraform_data.stream_group", "shards_before": null})
	found := q.deny with input as {"changes": [created, f.scale(4, 8)]}
	some v in found
	contains(v.msg, "scaling stream orders (module.orders.terraform_data.stream_group) routes")
}
