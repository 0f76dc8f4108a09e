package shardgate.lib_test

import data.shardgate.fixtures_test as f
import data.shardgate.lib

test_current_shards_from_plan_without_live if {
	lib.current_shards(f.scale(4, 8)) == 4 with input as {"changes": [], "live": {}}
}

test_current_shards_prefers_same_group_live if {
	live := {"orders": f.live_stream("orders", [f.live_group("audit", 9), f.live_group("billing", 6)])}
	lib.current_shards(f.scale(4, 8)) == 6 with input as {"live": live}
}

test_current_shards_max_over_other_groups if {
	live := {"orders": f.live_stream("orders", [f.live_group("audit", 3), f.live_group("search", 5)])}
	lib.current_shards(f.scale(4, 8)) == 5 with input as {"live": live}
}

test_current_shards_ignores_other_streams if {
	live := {"payments": f.live_stream("payments", [f.live_group("billing", 12)])}
	lib.current_shards(f.scale(4, 8)) == 4 with input as {"live": live}
}

test_current_shards_stream_without_groups_falls_back_to_plan if {
	live := {"orders": f.live_stream("orders", [])}
	lib.current_shards(f.scale(4, 8)) == 4 with input as {"live": live}
}

test_current_shards_null_when_unknown if {
	lib.current_shards(f.scale(null, 8)) == null with input as {"live": {}}
	lib.current_shards(f.scale(null, 8)) == null with input as {}
}

test_scales_out if {
	lib.scales_out(f.scale(4, 8)) with input as {}
	not lib.scales_out(f.scale(8, 4)) with input as {}
	not lib.scales_out(f.scale(4, null)) with input as {}
	not lib.scales_out(f.change({"action": "create", "shards_before": null, "shards_after": 8})) with input as {}
}

test_scales_out_uses_live_count if {
	live := {"orders": f.live_stream("orders", [f.live_group("billing", 8)])}
	not lib.scales_out(f.scale(4, 8)) with input as {"live": live}
}

test_addresses_sorted if {
	lib.addresses(["b", "a", "c"]) == "a, b, c"
}

test_addresses_truncated if {
	lib.addresses(["g", "f", "e", "d", "c", "b", "a"]) == "a, b, c, d, e and 2 more"
}

test_changed_streams if {
	streams := lib.changed_streams with input as {"changes": [
		f.change({"stream_prefix": "a"}),
		f.change({"stream_prefix": "b"}),
		f.change({"stream_prefix": "a"}),
	]}
	streams == {"a", "b"}
}

test_scaled_out_streams if {
	streams := lib.scaled_out_streams with input as {"changes": [
		f.scale(4, 8),
		f.change({"action": "scale", "stream_prefix": "payments", "shards_before": 8, "shards_after": 4}),
		f.change({"action": "create", "stream_prefix": "clicks", "shards_before": null, "shards_after": 4}),
	]}
	streams == {"orders"}
}

test_changes_with_uses_the_index if {
	# The index wins over input.changes: it is what the engine built them from.
	indexed := {"scale": [f.scale(4, 8)], "delete": [], "unmanage": [], "create": [], "update": []}
	lib.changes_with("scale") == [f.scale(4, 8)] with input as {"changes": [], "changes_by_action": indexed}
	lib.changes_with("delete") == [] with input as {"changes": [f.change({"action": "delete"})], "changes_by_action": indexed}
}

test_changes_with_filters_without_the_index if {
	changes := [f.scale(4, 8), f.change({"action": "delete", "address": "a"}), f.scale(2, 3)]
	lib.changes_with("scale") == [f.scale(4, 8), f.scale(2, 3)] with input as {"changes": changes}
	lib.changes_with("delete") == [f.change({"action": "delete", "address": "a"})] with input as {"changes": changes}
	lib.changes_with("create") == [] with input as {"changes": changes}
	lib.changes_with("scale") == [] with input as {}
}
