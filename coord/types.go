package coord

import (
	"encoding/json"
	"time"
)

// GroupState is GroupResponse.state.
type GroupState string

// Group states (OpenAPI GroupState).
const (
	GroupEmpty       GroupState = "EMPTY"
	GroupAssigning   GroupState = "ASSIGNING"
	GroupReconciling GroupState = "RECONCILING"
	GroupStable      GroupState = "STABLE"
)

// MigrationState is Migration.state. ROLLING_BACK exists in the contract but the
// coordinator never sets it.
type MigrationState string

// Migration states (coordinator.md §2).
const (
	MigrationPreparing   MigrationState = "PREPARING"
	MigrationActive      MigrationState = "ACTIVE"
	MigrationDraining    MigrationState = "DRAINING"
	MigrationDeprecated  MigrationState = "DEPRECATED"
	MigrationRollingBack MigrationState = "ROLLING_BACK"
	MigrationRolledBack  MigrationState = "ROLLED_BACK"
)

// MemberState is a consumer member's lifecycle state.
type MemberState string

// Member states; only ACTIVE and STARTING count as live.
const (
	MemberStarting MemberState = "STARTING"
	MemberActive   MemberState = "ACTIVE"
	MemberLeaving  MemberState = "LEAVING"
	MemberExpired  MemberState = "EXPIRED"
	MemberFenced   MemberState = "FENCED"
)

// Live reports whether the member still owns work (ACTIVE or STARTING).
func (s MemberState) Live() bool { return s == MemberActive || s == MemberStarting }

// NoopReshardingID is the id of the unstored migration a same-count scale returns.
const NoopReshardingID = "noop"

// Migration is one resharding operation of one group. It carries no group name:
// StreamScale.Migrations is index-aligned with AffectedConsumerGroups.
type Migration struct {
	ReshardingID   string         `json:"reshardingId"`
	FromShardCount int            `json:"fromShardCount"`
	ToShardCount   int            `json:"toShardCount"`
	State          MigrationState `json:"state"`
	CreatedAt      time.Time      `json:"createdAt"`
	UpdatedAt      time.Time      `json:"updatedAt"`
}

// UnmarshalJSON accepts the Jackson alias migrationId for reshardingId.
func (m *Migration) UnmarshalJSON(b []byte) error {
	type plain Migration
	var aux struct {
		plain
		MigrationID string `json:"migrationId"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*m = Migration(aux.plain)
	if m.ReshardingID == "" {
		m.ReshardingID = aux.MigrationID
	}
	return nil
}

// Group is the coordinator's GroupResponse.
type Group struct {
	StreamPrefix             string         `json:"streamPrefix"`
	ConsumerGroup            string         `json:"consumerGroup"`
	State                    GroupState     `json:"state"`
	GroupEpoch               int64          `json:"groupEpoch"`
	AssignmentEpoch          int64          `json:"assignmentEpoch"`
	MetadataVersion          int64          `json:"metadataVersion"`
	ShardCount               int            `json:"shardCount"`
	ActiveMigration          *Migration     `json:"activeMigration"`
	TargetAssignmentSummary  map[string]int `json:"targetAssignmentSummary"`
	CurrentAssignmentSummary map[string]int `json:"currentAssignmentSummary"`
}

// GroupList is the body of GET /monitoring/groups.
type GroupList struct {
	Groups []Group `json:"groups"`
}

// StreamCreated is the coordinator's StreamCreateResponse.
type StreamCreated struct {
	StreamPrefix    string `json:"streamPrefix"`
	ShardCount      int    `json:"shardCount"`
	MetadataVersion int64  `json:"metadataVersion"`
}

// RoutingShard is one physical shard key producers write to.
type RoutingShard struct {
	ShardIndex int    `json:"shardIndex"`
	StreamKey  string `json:"streamKey"`
	RedisSlot  int    `json:"redisSlot"`
}

// ProducerRouting is the coordinator's ProducerRoutingResponse.
type ProducerRouting struct {
	StreamPrefix     string         `json:"streamPrefix"`
	ConsumerGroup    string         `json:"consumerGroup"`
	MetadataVersion  int64          `json:"metadataVersion"`
	ShardCount       int            `json:"shardCount"`
	StreamKeyPattern string         `json:"streamKeyPattern"`
	Shards           []RoutingShard `json:"shards"`
}

// StreamScale is the coordinator's StreamScaleResponse.
type StreamScale struct {
	StreamPrefix           string      `json:"streamPrefix"`
	TargetShardCount       int         `json:"targetShardCount"`
	AffectedConsumerGroups []string    `json:"affectedConsumerGroups"`
	Migrations             []Migration `json:"migrations"`
}

// MigrationList is the coordinator's MigrationsResponse.
type MigrationList struct {
	Migrations         []Migration `json:"migrations"`
	ActiveReshardingID *string     `json:"activeReshardingId"`
}

// ShardID names one shard.
type ShardID struct {
	ShardIndex int `json:"shardIndex"`
}

// Assignments is the coordinator's AssignmentsResponse.
type Assignments struct {
	TargetAssignment    map[string][]ShardID `json:"targetAssignment"`
	CurrentAssignments  map[string][]ShardID `json:"currentAssignments"`
	RevokeProgress      map[string][]ShardID `json:"revokeProgress"`
	InvariantViolations []string             `json:"invariantViolations"`
}

// Member is the coordinator's MemberMetadata.
type Member struct {
	MemberID          string      `json:"memberId"`
	MemberName        string      `json:"memberName"`
	State             MemberState `json:"state"`
	MemberEpoch       int64       `json:"memberEpoch"`
	CurrentAssignment []ShardID   `json:"currentAssignment"`
	Revoking          []ShardID   `json:"revoking"`
}

// MemberList is the body of GET .../members.
type MemberList struct {
	Members []Member `json:"members"`
}

// Health is the coordinator's HealthResponse.
type Health struct {
	Status        string `json:"status"`
	CoordinatorID string `json:"coordinatorId"`
	Redis         string `json:"redis"`
	Loop          string `json:"loop"`
}

// CreateRequest is the body of both create endpoints. InitialShardCount 0 lets
// the coordinator pick its default (12).
type CreateRequest struct {
	InitialShardCount int    `json:"initialShardCount,omitempty"`
	RequestedBy       string `json:"requestedBy"`
	Reason            string `json:"reason,omitempty"`
}

// ScaleRequest is the body of both scale endpoints; TargetShardCount 0 is valid
// (drain every shard), so it is never omitted.
type ScaleRequest struct {
	TargetShardCount int    `json:"targetShardCount"`
	RequestedBy      string `json:"requestedBy"`
	Reason           string `json:"reason"`
}

// DeleteRequest is the body of a group delete.
type DeleteRequest struct {
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
	Force       bool   `json:"force"`
}

// RollbackRequest is the body of a migration rollback.
type RollbackRequest struct {
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
}

// ErrorBody is the coordinator's {status, errorCode, message} error body.
type ErrorBody struct {
	Status    string `json:"status"`
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}
