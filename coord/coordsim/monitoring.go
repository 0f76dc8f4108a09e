package coordsim

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/shardgate/shardgate/coord"
)

func (s *Sim) health(*call) reply {
	return ok(http.StatusOK, coord.Health{Status: "UP", CoordinatorID: s.coordinatorID, Redis: "UP", Loop: "UP"})
}

func (s *Sim) listGroups(*call) reply {
	out := coord.GroupList{Groups: []coord.Group{}}
	for _, g := range s.sortedGroups() {
		out.Groups = append(out.Groups, g.view())
	}
	return ok(http.StatusOK, out)
}

func (s *Sim) listMigrations(c *call) reply {
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	out := coord.MigrationList{Migrations: []coord.Migration{}}
	for _, m := range g.migrations {
		out.Migrations = append(out.Migrations, *m)
	}
	sort.SliceStable(out.Migrations, func(i, j int) bool { return out.Migrations[i].CreatedAt.Before(out.Migrations[j].CreatedAt) })
	if g.activeID != "" {
		id := g.activeID
		out.ActiveReshardingID = &id
	}
	return ok(http.StatusOK, out)
}

func (s *Sim) assignments(c *call) reply {
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	return ok(http.StatusOK, g.assignments())
}

func (s *Sim) members(c *call) reply {
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	return ok(http.StatusOK, coord.MemberList{Members: g.memberViews()})
}

// consumption reports one entry per owned shard; the simulator has no messages,
// so nothing is ever pending.
func (s *Sim) consumption(c *call) reply {
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	type progress struct {
		StreamPrefix  string            `json:"streamPrefix"`
		ConsumerGroup string            `json:"consumerGroup"`
		MemberID      string            `json:"memberId"`
		MemberName    string            `json:"memberName"`
		MemberState   coord.MemberState `json:"memberState"`
		Shard         coord.ShardID     `json:"shard"`
		StreamKey     string            `json:"streamKey"`
		PendingCount  int64             `json:"pendingCount"`
	}
	out := struct {
		Progress []progress `json:"progress"`
	}{Progress: []progress{}}
	for _, m := range g.members {
		for _, i := range m.current {
			out.Progress = append(out.Progress, progress{
				StreamPrefix: g.prefix, ConsumerGroup: g.name, MemberID: m.id, MemberName: m.id, MemberState: m.state,
				Shard: coord.ShardID{ShardIndex: i}, StreamKey: fmt.Sprintf("%s:%d", g.prefix, i),
			})
		}
	}
	return ok(http.StatusOK, out)
}

// offsets covers current shards only, like the coordinator's.
func (s *Sim) offsets(c *call) reply {
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	type offset struct {
		Shard          coord.ShardID `json:"shard"`
		StreamKey      string        `json:"streamKey"`
		RedisSlot      int           `json:"redisSlot"`
		StreamLength   int64         `json:"streamLength"`
		PendingCount   int64         `json:"pendingCount"`
		Lag            int64         `json:"lag"`
		OwnerMemberIDs []string      `json:"ownerMemberIds"`
	}
	owners := map[int][]string{}
	for _, m := range g.live() {
		for _, i := range m.current {
			owners[i] = append(owners[i], m.id)
		}
	}
	out := struct {
		StreamPrefix      string   `json:"streamPrefix"`
		ConsumerGroup     string   `json:"consumerGroup"`
		Shards            []offset `json:"shards"`
		TotalStreamLength int64    `json:"totalStreamLength"`
		TotalPendingCount int64    `json:"totalPendingCount"`
		TotalLag          int64    `json:"totalLag"`
		MemoryUsageKnown  bool     `json:"memoryUsageKnown"`
	}{StreamPrefix: g.prefix, ConsumerGroup: g.name, Shards: []offset{}}
	for _, sh := range g.routing().Shards {
		o := offset{Shard: coord.ShardID{ShardIndex: sh.ShardIndex}, StreamKey: sh.StreamKey, RedisSlot: sh.RedisSlot, OwnerMemberIDs: owners[sh.ShardIndex]}
		if o.OwnerMemberIDs == nil {
			o.OwnerMemberIDs = []string{}
		}
		out.Shards = append(out.Shards, o)
	}
	return ok(http.StatusOK, out)
}
