package shardgate.rules.no_destroy_test

import data.shardgate.fixtures_test as f
import data.shardgate.rules.no_destroy

test_delete_denied if {
	c := f.change({"kind": "redisstreamcoordinator_group", "address": "redisstreamcoordinator_group.orders", "action": "delete", "shards_after": null})
	found := no_destroy.deny with input as {"changes": [c]}
	count(found) == 1
	some v in found
	v.stream_prefix == "orders"
	v.consumer_group == "billing"
	v.address == "redisstreamcoordinator_group.orders"
	startswith(v.msg, "redisstreamcoordinator_group.orders deletes coordinator group orders/billing:")
	contains(v.msg, "removes the group's metadata")
}

test_unmanage_denied if {
	found := no_destroy.deny with input as {"changes": [f.change({"action": "unmanage", "shards_after": null})]}
	count(found) == 1
	some v in found
	v.address == "module.orders.terraform_data.stream_group"
	contains(v.msg, "unmanages coordinator group orders/billing")
	contains(v.msg, "Terraform forgets the group but the coordinator keeps it")
	contains(v.msg, "no-op on the coordinator")
}

test_each_destroy_reported if {
	found := no_destroy.deny with input as {"changes": [
		f.change({"action": "delete", "address": "a"}),
		f.change({"action": "unmanage", "address": "b"}),
		f.change({"action": "delete", "address": "c", "consumer_group": "audit"}),
	]}
	{v.address | some v in found} == {"a", "b", "c"}
}

test_other_actions_allowed if {
	found := no_destroy.deny with input as {"changes": [
		f.change({"action": "create", "shards_before": null}),
		f.scale(4, 8),
		f.change({"action": "update"}),
		f.change({"action": "noop"}),
	]}
	count(found) == 0
}

test_empty_input_allowed if {
	count(no_destroy.deny) == 0 with input as {}
}

# A move is one identity removed at one address and added at another: the
# coordinator ends where it started, so it is never a destroy.
test_move_is_not_a_destroy if {
	move := f.change({"action": "move", "moved_from": "module.old.terraform_data.stream_group", "terraform_actions": ["create"]})
	count(no_destroy.deny) == 0 with input as {"changes": [move]}
	count(no_destroy.deny) == 0 with input as {"changes": [move], "changes_by_action": {"move": [move], "delete": [], "unmanage": []}}
}

test_unmanage_still_managed_elsewhere_allowed if {
	c := f.change({"action": "unmanage", "shards_after": null, "managed_by": "module.new.terraform_data.stream_group"})
	count(no_destroy.deny) == 0 with input as {"changes": [c]}
}
