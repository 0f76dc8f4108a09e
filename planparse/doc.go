// Package planparse turns `terraform show -json` output into the set of changes
// it would make to Redis Stream Coordinator resources (coordinator.md §5, design.md
// "The coordinator change set"), and lists every other change of the plan.
//
// # What is a plan
//
// Only `terraform show -json` of a saved plan is accepted: an object with
// planned_values (terraform writes it even when nothing changes) or
// resource_changes, not null. Everything else is a *NotPlanError whose message is
// one line naming what the document looks like and what to run instead: a state
// (`values`, or `{"format_version":"1.0"}` alone, which `terraform show -json`
// prints without a state), `terraform validate -json` output (`valid`,
// `diagnostics`), `terraform providers schema -json` (`provider_schemas`), an HCP
// Terraform redacted plan (`plan_format_version`), `terraform plan -json` log
// lines (`@level`, `@message`), or any other object. A plan with
// `"errored": true` is an *ErroredPlanError ("terraform reported errors; this plan
// is partial"); `"complete": false` (deferred changes) sets ChangeSet.Incomplete
// and the plan is judged. format_version must be a version terraform-json supports
// (*FormatError). A wrong type of format_version, terraform_version,
// planned_values, resource_changes, errored or complete is a plan error.
//
// # Actions
//
// The actions of every resource_changes entry are checked: ["no-op"],
// ["create"], ["read"], ["update"], ["delete"], ["forget"], the replaces
// ["delete","create"] and ["create","delete"], and the forgetting replaces
// ["create","forget"] (terraform) and ["forget","create"] (OpenTofu,
// lifecycle destroy = false). Any other list fails the plan, naming the action:
// what nobody defines cannot be judged.
//
// # Stream-group module
//
// A managed `terraform_data` named `stream_group` at any module depth whose
// input has stream_prefix, consumer_group, shard_count and coordinator_base_url
// (a terraform_data.stream_group of another shape is another resource, listed in
// OtherChanges). Terraform never reads the coordinator for it, so a removal only
// makes Terraform forget the group:
//
//	["create"]                     create
//	["delete"], ["forget"]         unmanage (the coordinator keeps the group)
//	["no-op"]                      noop
//	["update"], any replace        scale when the shard count differs, is unknown or
//	(forgetting ones included)     invalid, update when it is equal; a changed or
//	                               unknown prefix/group/coordinator is create (new) +
//	                               unmanage (old)
//	tainted replace                scale from an unknown count (below)
//	["read"]                       ignored
//
// # redisstreamcoordinator_group
//
// It owns the group's metadata. Its attributes read: stream_prefix,
// consumer_group, shard_count.
//
//	["create"]                     create
//	["delete"]                     delete (metadata is destroyed)
//	["delete","create"],           delete (old) + create (new)
//	["create","delete"]
//	forgetting replace             as the module's replace: the old group is kept
//	["update"]                     scale or update as above; a changed identity is
//	                               delete + create
//	["forget"]                     unmanage
//	["no-op"]                      noop
//
// # redisstreamcoordinator_group_shard_count
//
// It applies a count to an existing group. Its attributes read: stream_prefix,
// consumer_group, shard_count.
//
//	["create"]                     scale (shards_before unknown to the plan: nil)
//	["update"], any replace        scale, or update when the count is equal; a
//	                               changed identity is scale (new) + unmanage (old)
//	["delete"], ["forget"]         unmanage (the coordinator keeps the count)
//	["no-op"]                      noop
//
// A side of a provider resource that lacks one of its attributes, and does not
// mark it unknown, lists it in Change.Missing; the change keeps its action, and a
// count that cannot be read makes a scale, never a harmless-looking update.
//
// # Effect
//
// ShardsBefore is the prior count when it is trustworthy, PriorShards the prior
// count as the plan reports it. A tainted instance (action_reason
// replace_because_tainted, or tainted in the plan's prior_state) failed its last
// apply: Tainted is set, ShardsBefore is nil and an update becomes a scale, since
// the retry calls the coordinator's scale from a count nobody knows. terraform
// from 1.2 on gives the reason for every tainted replace; the prior state is read
// for taints only where that may not hold (a replace without action_reason, from
// an older terraform) and before a removal is paired into a move.
//
// A shard count that is not a whole number >= 1 (4.5, 0, -3, 1e400, a string) is a
// verdict, not bad input: Change.InvalidShardCount holds it as written
// ("(sensitive)" when it is marked sensitive), ShardsAfter is nil and Desired gets
// no entry. An invalid prior count is no prior count.
//
// # Identity and moves
//
// A group is (coordinator, stream prefix, consumer group), the coordinator the
// module's coordinator_base_url normalized (NormalizeURL; "" for provider
// resources, whose coordinator is the provider's configuration); a stream is
// Change.Stream, StreamKey(coordinator, prefix), "" when the prefix or the
// module's coordinator is unknown. A URL spelled with a trailing slash or an
// upper-case host names the same group, so its replace at the same count is an
// update.
//
// Once every entry is read, an unmanage of one identity and an addition of the
// same identity of the same shape at another address (a module moved without a
// `moved` block, a renamed for_each key) become one change at the new address with
// MovedFrom the old one: move when the counts are equal (ShardsBefore the old
// count, ShardsAfter the new), scale otherwise. An identity with unknown or
// missing parts never pairs. A destroyed redisstreamcoordinator_group (delete, or
// its delete-and-create replace) is never paired with a create: its metadata
// really is destroyed, and the new group starts from nothing. An entry with
// previous_address (a `moved` block) keeps its action, noop included, with
// MovedFrom set.
//
// Values unknown at plan time (after_unknown) are listed in Change.Unknown and left
// empty, never guessed. Desired holds the shard count of every instance the plan
// leaves in place with a known count and stream, noops included.
//
// # Everything else
//
// Resources summarises each non-noop coordinator change for reports; values
// marked sensitive are rendered as "(sensitive)" and never copied. OtherChanges
// lists every non-noop change of a managed resource that is no coordinator shape,
// in plan order; data-source reads are left out. Both carry a Fingerprint: the hex
// SHA-256 of the address, the actions and the after value in a canonical form
// (members sorted, no white space, minimal string escapes, one notation per
// number), every value after_sensitive marks replaced by one marker and every
// value after_unknown marks (terraform leaves those out of after) by another. Two
// plans that write one change differently fingerprint alike; a sensitive value
// never changes the fingerprint, so it reveals nothing of it.
//
// # Parsers
//
// Parse streams the JSON: it steps over everything but the top-level members
// above, the resource_changes entries and prior_state, which it reads whole for
// the taints it may show, about ten times faster than decoding the plan into a
// tfjson.Plan. ParseBytes, for a plan already in memory, is faster still: what it
// does not read (planned_values, configuration, the unread parts of an entry) is
// stepped over with a structural check instead of a full validation, and what it
// reads is validated as it is read (see ParseBytes). Of an entry that is no
// coordinator shape only the actions are read, and for a change its after side
// and markers, for the fingerprint. On every well-formed plan the two agree
// (FuzzParse). ParseBytesProgress is ParseBytes that also says how far it has
// read, so that a caller holding a mapped file can drop the pages behind it and
// never hold the whole plan. ParseBytesParallel (shardgate check) is ParseBytes
// that reads the resource_changes entries on several goroutines, in pieces cut
// at guessed entry starts of which only those the first piece's entries lead to
// are kept, and says which ranges it is done with and which it read ahead of
// its walk (Hints); it returns what ParseBytes returns (FuzzParse), parsing
// again in sequence on any error.
package planparse
