package coordsim

import (
	"fmt"

	"github.com/shardgate/shardgate/coord"
)

func (g *group) view() coord.Group {
	out := coord.Group{
		StreamPrefix: g.prefix, ConsumerGroup: g.name, State: g.state,
		GroupEpoch: g.groupEpoch, AssignmentEpoch: g.assignmentEpoch, MetadataVersion: g.metadataVersion,
		ShardCount:              g.shardCount,
		TargetAssignmentSummary: map[string]int{}, CurrentAssignmentSummary: map[string]int{},
	}
	if m := g.active(); m != nil {
		cp := *m
		out.ActiveMigration = &cp
	}
	for id, shards := range g.target {
		out.TargetAssignmentSummary[id] = len(shards)
	}
	for _, m := range g.members {
		// The summary covers live owners only (ACTIVE, STARTING, LEAVING).
		if m.state.Live() || m.state == coord.MemberLeaving {
			out.CurrentAssignmentSummary[m.id] = len(m.current)
		}
	}
	return out
}

func (g *group) routing() coord.ProducerRouting {
	out := coord.ProducerRouting{
		StreamPrefix: g.prefix, ConsumerGroup: g.name, MetadataVersion: g.metadataVersion,
		ShardCount: g.shardCount, StreamKeyPattern: g.prefix + ":{shardIndex}", Shards: []coord.RoutingShard{},
	}
	for i := 0; i < g.shardCount; i++ {
		key := fmt.Sprintf("%s:%d", g.prefix, i)
		out.Shards = append(out.Shards, coord.RoutingShard{ShardIndex: i, StreamKey: key, RedisSlot: RedisSlot(key)})
	}
	return out
}

func shardIDs(idx []int) []coord.ShardID {
	out := make([]coord.ShardID, 0, len(idx))
	for _, i := range idx {
		out = append(out, coord.ShardID{ShardIndex: i})
	}
	return out
}

func (g *group) assignments() coord.Assignments {
	out := coord.Assignments{
		TargetAssignment: map[string][]coord.ShardID{}, CurrentAssignments: map[string][]coord.ShardID{},
		RevokeProgress: map[string][]coord.ShardID{}, InvariantViolations: g.invariantViolations(),
	}
	for id, shards := range g.target {
		out.TargetAssignment[id] = shardIDs(shards)
	}
	for _, m := range g.members {
		out.CurrentAssignments[m.id] = shardIDs(m.current)
		if len(m.revoking) > 0 {
			out.RevokeProgress[m.id] = shardIDs(m.revoking)
		}
	}
	return out
}

func (g *group) memberViews() []coord.Member {
	out := make([]coord.Member, 0, len(g.members))
	for _, m := range g.members {
		out = append(out, coord.Member{
			MemberID: m.id, MemberName: m.id, State: m.state, MemberEpoch: m.epoch,
			CurrentAssignment: shardIDs(m.current), Revoking: shardIDs(m.revoking),
		})
	}
	return out
}
