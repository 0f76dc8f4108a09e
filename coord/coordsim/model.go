package coordsim

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/shardgate/shardgate/coord"
)

// member is one simulated consumer runtime.
type member struct {
	id       string
	state    coord.MemberState
	epoch    int64
	current  []int
	revoking []int
}

// group is one coordinator group record plus its simulated consumers.
type group struct {
	prefix, name    string
	state           coord.GroupState
	groupEpoch      int64
	assignmentEpoch int64
	metadataVersion int64
	shardCount      int
	activeID        string
	migrations      []*coord.Migration
	members         []*member
	target          map[string][]int
	nextMember      int
}

func newGroup(prefix, name string, shards, members int) *group {
	g := &group{prefix: prefix, name: name, shardCount: shards, groupEpoch: 1, metadataVersion: 1, target: map[string][]int{}}
	g.setLiveMembers(members)
	return g
}

func (g *group) live() []*member {
	var out []*member
	for _, m := range g.members {
		if m.state.Live() {
			out = append(out, m)
		}
	}
	return out
}

// setLiveMembers grows or shrinks the live set; shrunk members expire and give
// up their shards at once, as a lease expiry does.
func (g *group) setLiveMembers(n int) {
	live := g.live()
	for i := len(live); i < n; i++ {
		g.nextMember++
		g.members = append(g.members, &member{id: fmt.Sprintf("%s-member-%d", g.name, g.nextMember), state: coord.MemberActive, epoch: 1})
	}
	for i := n; i < len(live); i++ {
		live[i].state, live[i].current, live[i].revoking = coord.MemberExpired, nil, nil
	}
	g.groupEpoch++
	g.recomputeTarget()
}

// recomputeTarget spreads the shards round-robin over the live members.
func (g *group) recomputeTarget() {
	g.assignmentEpoch++
	g.target = map[string][]int{}
	live := g.live()
	for _, m := range live {
		g.target[m.id] = []int{}
	}
	for i := 0; i < g.shardCount && len(live) > 0; i++ {
		id := live[i%len(live)].id
		g.target[id] = append(g.target[id], i)
	}
	if len(live) == 0 {
		g.state = coord.GroupEmpty
	} else if !g.reconciled() {
		g.state = coord.GroupAssigning
	}
}

func (g *group) reconciled() bool {
	for _, m := range g.live() {
		if len(m.revoking) > 0 || !slices.Equal(m.current, g.target[m.id]) {
			return false
		}
	}
	return true
}

// heartbeat is one heartbeat round of every live member: finished revokes are
// reported REVOKED, shards no longer targeted start revoking, and targeted shards
// nobody else holds are taken.
func (g *group) heartbeat() {
	held := map[int]string{}
	for _, m := range g.live() {
		if len(m.revoking) > 0 {
			m.revoking = nil
			continue
		}
		want := g.target[m.id]
		var keep []int
		for _, s := range m.current {
			if slices.Contains(want, s) {
				keep = append(keep, s)
			} else {
				m.revoking = append(m.revoking, s)
			}
		}
		m.current = keep
	}
	for _, m := range g.live() {
		for _, s := range append(slices.Clone(m.current), m.revoking...) {
			held[s] = m.id
		}
	}
	for _, m := range g.live() {
		for _, s := range g.target[m.id] {
			if _, taken := held[s]; !taken {
				m.current = append(m.current, s)
				held[s] = m.id
			}
		}
		sort.Ints(m.current)
		if m.current == nil {
			m.current = []int{}
		}
	}
	switch {
	case len(g.live()) == 0:
		g.state = coord.GroupEmpty
	case g.reconciled():
		g.state = coord.GroupStable
	default:
		g.state = coord.GroupReconciling
	}
}

func (g *group) migration(id string) *coord.Migration {
	for _, m := range g.migrations {
		if m.ReshardingID == id {
			return m
		}
	}
	return nil
}

func (g *group) active() *coord.Migration {
	if g.activeID == "" {
		return nil
	}
	return g.migration(g.activeID)
}

// activate is the PREPARING -> ACTIVE step: routing flips to the target now.
func (g *group) activate(m *coord.Migration, now time.Time) {
	m.State, m.UpdatedAt = coord.MigrationActive, now
	g.shardCount = m.ToShardCount
	g.metadataVersion++
	g.groupEpoch++
	g.recomputeTarget()
}

// advance moves the active migration at most one step (coordinator.md §2).
func (g *group) advance(now time.Time, drainStuck bool) {
	m := g.active()
	if m == nil {
		return
	}
	switch m.State {
	case coord.MigrationActive:
		live := g.live()
		switch {
		case len(live) > 0 && g.state == coord.GroupStable && g.reconciled():
			m.State, m.UpdatedAt = coord.MigrationDraining, now
		case len(live) == 0 && m.ToShardCount < m.FromShardCount:
			// Scale-in without members skips the revoke wait; a scale-out without
			// members never leaves ACTIVE.
			m.State, m.UpdatedAt = coord.MigrationDraining, now
		}
	case coord.MigrationDraining:
		if drainStuck {
			return
		}
		for _, mb := range g.live() {
			for _, s := range append(slices.Clone(mb.current), mb.revoking...) {
				if s >= m.ToShardCount {
					return
				}
			}
		}
		m.State, m.UpdatedAt = coord.MigrationDeprecated, now
		g.activeID = ""
	}
}

// rollback applies the rollback rules: only the active migration in ACTIVE.
func (g *group) rollback(m *coord.Migration, now time.Time) bool {
	switch {
	case m.State == coord.MigrationRolledBack || m.State == coord.MigrationRollingBack:
		return true
	case m.ReshardingID != g.activeID || m.State != coord.MigrationActive:
		return false
	}
	m.State, m.UpdatedAt = coord.MigrationRolledBack, now
	g.shardCount = m.FromShardCount
	g.activeID = ""
	g.metadataVersion++
	g.groupEpoch++
	g.recomputeTarget()
	return true
}

func (g *group) invariantViolations() []string {
	out := []string{}
	owner := map[int]string{}
	for _, m := range g.live() {
		for _, s := range m.current {
			if o, ok := owner[s]; ok {
				out = append(out, fmt.Sprintf("shard %d owned by %s and %s", s, o, m.id))
			}
			owner[s] = m.id
		}
	}
	return out
}
