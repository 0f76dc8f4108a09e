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
type Change struct {
	Address        string `json:"address"`
	Kind           Kind   `json:"kind"`
	StreamPrefix   string `json:"stream_prefix"`
	ConsumerGroup  string `json:"consumer_group"`
	CoordinatorURL string `json:"coordinator_url,omitempty"`
	Action         Action `json:"action"`
	// ShardsBefore and ShardsAfter are nil when there is no such side (create,
	// delete) or when the value is unknown at plan time (see Unknown).
	ShardsBefore *int `json:"shards_before"`
	ShardsAfter  *int `json:"shards_after"`
	// Unknown lists the fields (Field* constants) whose planned value is unknown.
	Unknown []string `json:"unknown,omitempty"`
	// ActionReason is Terraform's action_reason, e.g. "replace_because_tainted".
	ActionReason string `json:"action_reason,omitempty"`
	// TerraformActions are the plan's raw actions, e.g. ["delete","create"].
	TerraformActions []string `json:"terraform_actions"`
}

// Desired is the shard count one instance in the plan asks for, unchanged instances
// included: two Desired entries of one stream prefix that disagree are a conflict.
type Desired struct {
	Address       string `json:"address"`
	StreamPrefix  string `json:"stream_prefix"`
	ConsumerGroup string `json:"consumer_group"`
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
}

// ChangeSet is everything the decision engine needs from one plan.
type ChangeSet struct {
	FormatVersion    string `json:"format_version"`
	TerraformVersion string `json:"terraform_version,omitempty"`
	// Changes holds every coordinator change in plan order, noops included.
	Changes []Change `json:"changes"`
	// Desired holds the shard count every surviving instance asks for.
	Desired []Desired `json:"desired"`
	// Resources summarises the raw coordinator resource changes (noops left out).
	Resources []ResourceChange `json:"resources"`
}
