// Package planparse turns `terraform show -json` output into the set of changes
// it would make to Redis Stream Coordinator resources (coordinator.md §5, design.md
// "The coordinator change set"). Everything else in a plan is ignored: data sources,
// other resource types, other modules.
//
// Stream-group module: a managed `terraform_data` named `stream_group` at any module
// depth whose input has stream_prefix, consumer_group, shard_count and
// coordinator_base_url (a terraform_data.stream_group of another shape is ignored).
// Terraform never reads the coordinator for it, so a removal only makes Terraform
// forget the group:
//
//	["create"]                     create
//	["delete"], ["forget"]         unmanage (the coordinator keeps the group)
//	["no-op"]                      noop
//	["update"], replace            scale when the shard count differs or is unknown,
//	                               update when it is equal (e.g. replace_because_tainted:
//	                               the last apply failed); a changed or unknown
//	                               prefix/group/URL is create (new) + unmanage (old)
//	["read"]                       ignored
//
// redisstreamcoordinator_group owns the group's metadata:
//
//	["create"]                     create
//	["delete"]                     delete (metadata is destroyed)
//	replace                        delete (old) + create (new)
//	["update"]                     scale or update as above; a changed identity is
//	                               delete + create
//	["forget"]                     unmanage
//	["no-op"]                      noop
//
// redisstreamcoordinator_group_shard_count applies a count to an existing group:
//
//	["create"]                     scale (shards_before unknown to the plan: nil)
//	["update"], replace            scale, or update when the count is equal; a
//	                               changed identity is scale (new) + unmanage (old)
//	["delete"], ["forget"]         unmanage (the coordinator keeps the count)
//	["no-op"]                      noop
//
// Values unknown at plan time (after_unknown) are listed in Change.Unknown and left
// empty, never guessed. Desired holds the shard count of every instance the plan
// leaves in place with a known count and prefix, noops included. Resources summarises
// each non-noop coordinator change for reports; values marked sensitive are rendered
// as "(sensitive)" and never copied.
//
// Parse streams the JSON: it skips everything but format_version, terraform_version
// and the resource_changes entries of the three types, about ten times faster than
// decoding the plan into a tfjson.Plan, and keeps only the result in memory.
// ParseBytes, for a plan already in memory, is faster still: what it does not read
// (prior_state, planned_values, configuration, the unread parts of an entry) is
// stepped over with a structural check instead of a full validation, and what it
// reads is validated as it is read (see ParseBytes).
package planparse
