# METADATA
# title: shardgate's built-in rules for conftest
# description: >-
#   The comparison policy of the whole-process benchmark (bench/): shardgate's
#   no_destroy, shard_delta, quiesce_attestation and conflicting_shard_count rules,
#   written the way a conftest user would, over the raw `terraform show -json` plan of
#   a root that calls examples/modules/stream-group. Attestations and exception
#   labels come from a data file (--data): {"attested_streams": {"<prefix>": true},
#   "labels": ["policy-exception/<rule>"]}. There is no coordinator here, so a scale
#   starts from the plan's prior count, as `shardgate check` does without one.
#   bench/policy_test.go proves it finds what shardgate finds.
package main

max_shard_delta := 4

max_scale_factor := 2

labels := {l | some l in data.labels}

# instances are the stream-group module's terraform_data resources.
instances := [r |
	some r in input.resource_changes
	r.mode == "managed"
	r.type == "terraform_data"
	r.name == "stream_group"
]

group(v) := {
	"stream_prefix": v.input.stream_prefix,
	"consumer_group": v.input.consumer_group,
	"coordinator_base_url": v.input.coordinator_base_url,
}

replace(actions) if actions == ["delete", "create"]

replace(actions) if actions == ["create", "delete"]

# A replace that keeps the group and changes the count is a scale; one that moves
# the instance to another group is a create of the new one and an unmanage of the
# old one (destroying the module never touches the coordinator).
changes contains c if {
	some r in instances
	replace(r.change.actions)
	group(r.change.before) == group(r.change.after)
	before := r.change.before.input.shard_count
	after := r.change.after.input.shard_count
	action := {true: "scale", false: "update"}[before != after]
	c := object.union(group(r.change.after), {"address": r.address, "action": action, "before": before, "after": after})
}

changes contains c if {
	some r in instances
	replace(r.change.actions)
	group(r.change.before) != group(r.change.after)
	some [side, action] in [["before", "unmanage"], ["after", "create"]]
	c := object.union(group(r.change[side]), {"address": r.address, "action": action, "after": r.change.after.input.shard_count})
}

changes contains c if {
	some r in instances
	r.change.actions == ["delete"]
	c := object.union(group(r.change.before), {"address": r.address, "action": "unmanage"})
}

changes contains c if {
	some r in instances
	[action] := r.change.actions
	action in {"create", "update", "no-op"}
	c := object.union(group(r.change.after), {"address": r.address, "action": action, "after": r.change.after.input.shard_count})
}

scales := [c | some c in changes; c.action == "scale"]

# desired are the changes that leave a group asking for a shard count.
desired := [c | some c in changes; c.action != "unmanage"]

# The addresses of each scaled stream and the counts each stream is asked for.
# OPA indexes the inner comprehensions by stream_prefix (comprehension indexing),
# so each is one pass over the changes; partial rules grouping the same way
# (desired_counts[prefix] contains n) take time quadratic in the plan.
scale_addresses := {prefix: addrs |
	some prefix in {c.stream_prefix | some c in scales}
	addrs := [c.address | some c in scales; c.stream_prefix == prefix]
}

desired_counts := {prefix: counts |
	some prefix in {c.stream_prefix | some c in desired}
	counts := {c.after | some c in desired; c.stream_prefix == prefix}
}

# addresses lists at most five addresses, sorted, as shardgate's messages do.
addresses(addrs) := concat(", ", sorted) if {
	count(addrs) <= 5
	sorted := sort(addrs)
} else := sprintf("%s and %d more", [concat(", ", array.slice(sort(addrs), 0, 5)), count(addrs) - 5])

finding(rule, c, msg) := {"msg": msg, "rule": rule, "stream_prefix": c.stream_prefix, "address": c.address}

deny contains f if {
	not labels["policy-exception/no_destroy"]
	some c in changes
	c.action == "unmanage"
	msg := sprintf("%s unmanages coordinator group %s/%s: Terraform forgets the group but the coordinator keeps it", [c.address, c.stream_prefix, c.consumer_group])
	f := finding("no_destroy", c, msg)
}

deny contains f if {
	not labels["policy-exception/shard_delta"]
	some c in scales
	not within_limits(c.before, c.after)
	msg := sprintf("%s scales stream %s from %d to %d shards, over the limits of %d shards and a factor of %d per change", [c.address, c.stream_prefix, c.before, c.after, max_shard_delta, max_scale_factor])
	f := finding("shard_delta", c, msg)
}

within_limits(before, after) if {
	abs(after - before) <= max_shard_delta
	after <= before * max_scale_factor
	before <= after * max_scale_factor
}

deny contains f if {
	not labels["policy-exception/quiesce_attestation"]
	by_prefix := scale_addresses
	some prefix, addrs in by_prefix
	not data.attested_streams[prefix]
	msg := sprintf("scaling stream %s (%s) routes partition keys to other shards: pause its producers and drain their in-flight retries first", [prefix, addresses(addrs)])
	f := finding("quiesce_attestation", {"stream_prefix": prefix, "address": ""}, msg)
}

deny contains f if {
	by_prefix := desired_counts
	some prefix, counts in by_prefix
	count(counts) > 1
	parts := [sprintf("%d shards (%s)", [n, addresses(addrs)]) |
		some n in sort(counts)
		addrs := [c.address | some c in desired; c.stream_prefix == prefix; c.after == n]
	]
	msg := sprintf("stream %s is asked for %d different shard counts: %s", [prefix, count(counts), concat("; ", parts)])
	f := finding("conflicting_shard_count", {"stream_prefix": prefix, "address": ""}, msg)
}
