package planparse

// Action is what a planned change does to the coordinator.
type Action string

const (
	// ActionCreate creates a coordinator group (or starts managing a new identity).
	ActionCreate Action = "create"
	// ActionScale changes the shard count of an existing stream.
	ActionScale Action = "scale"
	// ActionDelete removes coordinator group metadata (provider group resource
	// destroyed or replaced).
	ActionDelete Action = "delete"
	// ActionUnmanage makes Terraform forget a group that the coordinator keeps
	// (stream-group module instance removed, or its identity changed).
	ActionUnmanage Action = "unmanage"
	// ActionUpdate is an in-place change that touches neither identity nor shard count.
	ActionUpdate Action = "update"
	// ActionMove is one identity removed at one address and added at another in the
	// same plan (a module moved without a `moved` block, a renamed key) at the same
	// shard count: the coordinator ends where it started. MovedFrom names the old
	// address. The same pair with a different count is a scale with MovedFrom set.
	ActionMove Action = "move"
	// ActionNoop is an unchanged instance; it still contributes its desired shard count.
	ActionNoop Action = "noop"
)

// Kind says which Terraform shape a change came from.
type Kind string

const (
	// KindModule is the stream-group module's `terraform_data.stream_group`.
	KindModule Kind = "stream_group_module"
	// KindGroup is the provider resource `redisstreamcoordinator_group`.
	KindGroup Kind = "redisstreamcoordinator_group"
	// KindShardCount is the provider resource `redisstreamcoordinator_group_shard_count`.
	KindShardCount Kind = "redisstreamcoordinator_group_shard_count"
)

// Names of the coordinator fields a change can leave unknown at plan time.
const (
	FieldStreamPrefix   = "stream_prefix"
	FieldConsumerGroup  = "consumer_group"
	FieldShardCount     = "shard_count"
	FieldCoordinatorURL = "coordinator_base_url"
)

// Change is one planned change to one coordinator group identity.
// A Terraform replace that changes the identity yields two Changes with the same Address.
//
// A group's identity is (Coordinator, StreamPrefix, ConsumerGroup); a stream is
// (Coordinator, StreamPrefix), named by Stream (StreamKey).
type Change struct {
	Address       string `json:"address"`
	Kind          Kind   `json:"kind"`
	StreamPrefix  string `json:"stream_prefix"`
	ConsumerGroup string `json:"consumer_group"`
	// CoordinatorURL is the plan's coordinator_base_url as written (module only).
	CoordinatorURL string `json:"coordinator_url,omitempty"`
	// Coordinator is CoordinatorURL normalized (NormalizeURL): the identity's
	// coordinator part, without credentials. "" for provider resources, whose
	// coordinator is the provider's configuration.
	Coordinator string `json:"coordinator,omitempty"`
	// Stream is StreamKey(Coordinator, StreamPrefix): two coordinators with one
	// prefix are two streams.
	Stream string `json:"stream"`
	Action Action `json:"action"`
	// ShardsBefore is the count the coordinator has before the apply: from the plan,
	// the prior state's count when it is trustworthy (never for a tainted
	// instance: its last apply failed); once live state is read (policy), the live
	// count. nil when there is no such side or it is unknown.
	// ShardsAfter is the desired count, nil when there is none or it is unknown.
	ShardsBefore *int `json:"shards_before"`
	ShardsAfter  *int `json:"shards_after"`
	// PriorShards is the prior state's count as the plan reports it, trusted or not
	// (a tainted instance's), nil when there is none.
	PriorShards *int `json:"prior_shards,omitempty"`
	// Tainted is set when Terraform replaces the instance because its last apply failed.
	Tainted bool `json:"tainted,omitempty"`
	// MovedFrom is the old address of a move (or of a scale found by pairing a
	// removal with an addition of the same identity).
	MovedFrom string `json:"moved_from,omitempty"`
	// ManagedBy is set on an unmanage whose group another instance of the plan
	// (same coordinator, prefix and group) still manages: the address of that
	// instance. Removing one of two declarations of a group (the second step of
	// moving it between modules) moves its ownership; the coordinator is not
	// called and the group stays managed, so no_destroy does not deny it.
	ManagedBy string `json:"managed_by,omitempty"`
	// Importing is set when an `import` block brings the object under management
	// (change.importing). The imported object's values are the starting point:
	// ShardsBefore is its count when it carries one (a provider resource), else
	// nil until the live count is read; an import whose starting count stays
	// unknown is denied (unknown_value).
	Importing bool `json:"importing,omitempty"`
	// Unknown lists the fields (Field* constants) whose planned value is unknown.
	Unknown []string `json:"unknown,omitempty"`
	// Missing lists the attributes a provider resource lacks (docs/policy-input.md
	// names the ones read per type); the change cannot be judged and is denied.
	Missing []string `json:"missing,omitempty"`
	// InvalidShardCount is the planned shard count as written when it is not a
	// whole number >= 1 ("4.5", "0"); ShardsAfter is nil then. "(sensitive)" when
	// the value is sensitive.
	InvalidShardCount string `json:"invalid_shard_count,omitempty"`
	// Sensitive lists the identity fields (FieldStreamPrefix, FieldConsumerGroup,
	// FieldCoordinatorURL) the plan marks sensitive on either side. The values
	// are kept as they are, since the gate needs them to read the live state and
	// lock the stream, but nothing shardgate renders may show them: reports show
	// "(sensitive)" (ChangeSet.SensitiveValues).
	Sensitive []string `json:"sensitive,omitempty"`
	// ActionReason is Terraform's action_reason, e.g. "replace_because_tainted".
	ActionReason string `json:"action_reason,omitempty"`
	// TerraformActions are the plan's raw actions, e.g. ["delete","create"].
	TerraformActions []string `json:"terraform_actions"`
}

// CallsCoordinator reports whether applying the change calls the coordinator's
// create or scale API: a create, scale, update or move (any replace, tainted
// retry or new address of the module runs apply.sh, which creates the group if
// it is missing and scales the stream when its live count differs), not a
// removal or a noop.
func (c *Change) CallsCoordinator() bool {
	switch c.Action {
	case ActionCreate, ActionScale, ActionUpdate, ActionMove:
		return true
	}
	return false
}

// Desired is the shard count one instance in the plan asks for, unchanged instances
// included: two Desired entries of one stream that disagree are a conflict.
type Desired struct {
	Address       string `json:"address"`
	StreamPrefix  string `json:"stream_prefix"`
	ConsumerGroup string `json:"consumer_group"`
	Coordinator   string `json:"coordinator,omitempty"`
	Stream        string `json:"stream"`
	ShardCount    int    `json:"shard_count"`
}

// ResourceChange is a redaction-safe summary of one coordinator resource's raw change,
// shown folded in reports. Values of sensitive attributes are never copied here.
type ResourceChange struct {
	Address      string   `json:"address"`
	Actions      []string `json:"actions"`
	ActionReason string   `json:"action_reason,omitempty"`
	// Diff lists changed attributes as "name: before -> after", sensitive values redacted.
	Diff []string `json:"diff,omitempty"`
	// Fingerprint identifies the change: address, actions and the after-values with
	// sensitive values redacted (see OtherChange.Fingerprint).
	Fingerprint string `json:"fingerprint"`
}

// OtherChange is a non-noop change of a resource that is not a coordinator shape
// (a bucket, an IAM policy, a terraform_data of another shape): shown in reports,
// carried in the policy input and compared by the apply guard. Data-source reads
// are not changes and are left out.
type OtherChange struct {
	Address      string   `json:"address"`
	Type         string   `json:"type"`
	Actions      []string `json:"actions"`
	ActionReason string   `json:"action_reason,omitempty"`
	// Fingerprint is a hex SHA-256 over the address, the actions and the canonical
	// after-values with every sensitive value replaced by a marker and unknown
	// values marked: equal fingerprints mean the same change as far as a reviewer
	// could see it. It reveals no sensitive value.
	Fingerprint string `json:"fingerprint"`
}

// ChangeSet is everything the decision engine needs from one plan.
type ChangeSet struct {
	FormatVersion    string `json:"format_version"`
	TerraformVersion string `json:"terraform_version,omitempty"`
	// Incomplete is set when the plan says "complete": false (deferred changes):
	// it is judged, and more changes follow in a later plan.
	Incomplete bool `json:"incomplete,omitempty"`
	// Changes holds every coordinator change in plan order, noops included.
	Changes []Change `json:"changes"`
	// Desired holds the shard count every surviving instance asks for.
	Desired []Desired `json:"desired"`
	// Resources summarises the raw coordinator resource changes (noops left out).
	Resources []ResourceChange `json:"resources"`
	// OtherChanges lists every non-noop change of another resource, in plan order.
	OtherChanges []OtherChange `json:"other_changes"`
}
