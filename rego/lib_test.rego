package shardgate.lib_test

import data.shardgate.fixtures_test as f
import data.shardgate.lib

test_current_shards_is_the_judged_before if {
	# The engine has put the live count into shards_before (policy/effect.go).
	lib.current_shards(f.scale(6, 8)) == 6 with input as {"changes": []}
	lib.current_shards(f.scale(null, 8)) == null with input as {}
}

test_scales_out if {
	lib.scales_out(f.scale(4, 8)) with input as {}
	not lib.scales_out(f.scale(8, 4)) with input as {}
	not lib.scales_out(f.scale(4, null)) with input as {}
	not lib.scales_out(f.change({"action": "create", "shards_before": null, "shards_after": 8})) with input as {}
}

test_addresses_sorted if {
	lib.addresses(["b", "a", "c"]) == "a, b, c"
}

test_addresses_truncated if {
	lib.addresses(["g", "f", "e", "d", "c", "b", "a"]) == "a, b, c, d, e and 2 more"
}

test_changed_streams if {
	streams := lib.changed_streams with input as {"changes": [
		f.change({"action": "create", "stream_prefix": "a"}),
		f.change({"action": "scale", "stream_prefix": "b"}),
		f.change({"action": "delete", "stream_prefix": "a"}),
		f.change({"action": "scale", "stream_prefix": "a", "coordinator": "http://other"}),
		f.change({"action": "move", "stream_prefix": "moved"}),
	]}
	streams == {f.key("a"), f.key("b"), "http://other a"}
}

test_scaled_out_streams if {
	streams := lib.scaled_out_streams with input as {"changes": [
		f.scale(4, 8),
		f.change({"action": "scale", "stream_prefix": "payments", "shards_before": 8, "shards_after": 4}),
		f.change({"action": "create", "stream_prefix": "clicks", "shards_before": null, "shards_after": 4}),
	]}
	streams == {f.key("orders")}
}

test_stream_changes_uses_the_index if {
	indexed := {f.key("orders"): [f.scale(4, 8)]}
	lib.stream_changes(f.key("orders")) == [f.scale(4, 8)] with input as {"changes": [], "changes_by_stream": indexed}
	lib.stream_changes(f.key("payments")) == [] with input as {"changes": [f.change({"stream_prefix": "payments"})], "changes_by_stream": indexed}
}

test_stream_changes_filters_without_the_index if {
	changes := [f.scale(4, 8), f.change({"action": "delete", "stream_prefix": "payments"}), f.scale(2, 3)]
	lib.stream_changes(f.key("orders")) == [f.scale(4, 8), f.scale(2, 3)] with input as {"changes": changes}
	lib.stream_changes("orders") == [] with input as {"changes": changes}
}

test_stream_prefix_and_name if {
	streams := {"http://a orders": {"coordinator": "http://a", "stream_prefix": "orders", "name": "orders on http://a"}}
	lib.stream_prefix("http://a orders") == "orders" with input as {"streams": streams}
	lib.stream_name("http://a orders") == "orders on http://a" with input as {"streams": streams}

	# Keys the engine did not describe are split like planparse.SplitStreamKey.
	lib.stream_prefix("http://b:80/x orders two") == "orders two" with input as {"streams": streams}
	lib.stream_name("http://b orders") == "orders" with input as {}
	lib.stream_prefix("orders two") == "orders two" with input as {}
	lib.stream_prefix("") == "" with input as {}
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
