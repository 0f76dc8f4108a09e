package shardgate.rules.active_migration_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.active_migration

migrating := object.union(f.live_group("audit", 8), {"active_migration_id": "mig-42", "migration_state": "DRAINING"})

test_active_migration_on_changed_stream_warns if {
	live := f.live({"orders": [f.live_group("billing", 4), migrating]})
	found := active_migration.warn with input as {"changes": [f.scale(4, 8)], "live": live}
	found == {{
		"msg": "group orders/audit has active migration mig-42 (DRAINING): the apply waits for it to finish before changing the stream",
		"stream": f.key("orders"),
		"stream_prefix": "orders",
		"consumer_group": "audit",
		"address": "",
	}}
}

test_migration_state_missing if {
	group := object.remove(migrating, ["migration_state"])
	live := f.live({"orders": [group]})
	found := active_migration.warn with input as {"changes": [f.scale(4, 8)], "live": live}
	some v in found
	contains(v.msg, "mig-42 (state unknown)")
}

test_unchanged_stream_quiet if {
	live := f.live({"payments": [migrating]})
	count(active_migration.warn) == 0 with input as {"changes": [f.scale(4, 8)], "live": live}
}

test_no_migration_quiet if {
	live := f.live({"orders": [f.live_group("billing", 4), object.remove(f.live_group("audit", 4), ["active_migration_id"])]})
	count(active_migration.warn) == 0 with input as {"changes": [f.scale(4, 8)], "live": live}
}

# The same prefix on another coordinator is another stream.
test_same_prefix_other_coordinator_quiet if {
	live := {"http://other:8080 orders": object.union(f.live_stream("orders", [migrating]), {"coordinator": "http://other:8080"})}
	count(active_migration.warn) == 0 with input as {"changes": [f.scale(4, 8)], "live": live}
}

# A move changes nothing on the coordinator, so nothing waits for the migration.
test_move_quiet if {
	live := f.live({"orders": [migrating]})
	move := f.change({"action": "move", "moved_from": "module.old.terraform_data.stream_group"})
	count(active_migration.warn) == 0 with input as {"changes": [move], "live": live}
}
