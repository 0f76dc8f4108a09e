package coordsim

import (
	"slices"
	"time"

	"github.com/shardgate/shardgate/coord"
)

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

// tick is one event-loop round of the group: every live consumer heartbeats
// (a consumer that saw a higher metadataVersion is told to sync instead, see
// sync.go), the group reconciles, and the active migration moves at most one
// step (a scale-in without live members two, DRAINING then DEPRECATED).
func (g *group) tick(now time.Time, drainStuck bool) {
	if len(g.live()) == 0 {
		// With nobody left to acknowledge it, the sync ends when the stale member
		// records are pruned; the simulator prunes at once.
		g.correction = nil
	}
	var normal []*member
	for _, m := range g.live() {
		if !g.syncHeartbeat(m) {
			normal = append(normal, m)
		}
	}
	sent := make([]int64, len(normal))
	for i, m := range normal {
		sent[i] = m.seen
	}
	if len(normal) > 0 {
		g.exchange(normal)
		g.reconcile()
	}
	g.advance(now, drainStuck)
	for i, m := range normal {
		g.acknowledge(m.id, sent[i])
		m.seen = g.metadataVersion
	}
}

// activate is the PREPARING -> ACTIVE step: routing flips to the target now.
func (g *group) activate(m *coord.Migration, now time.Time) {
	m.State, m.UpdatedAt = coord.MigrationActive, now
	g.shardCount = m.ToShardCount
	g.bump(true)
	g.reconcile()
}

// advance is advanceMigrationDrainState (coordinator.md §2).
func (g *group) advance(now time.Time, drainStuck bool) {
	m := g.active()
	if m == nil {
		return
	}
	switch m.State {
	case coord.MigrationActive:
		g.startDrain(m, now, drainStuck)
	case coord.MigrationDraining:
		g.completeDrain(m, now, drainStuck)
	}
}

// startDrain moves ACTIVE -> DRAINING once every live member holds exactly its
// target in a STABLE group. A scale-in without live members skips the revoke
// wait and tries DEPRECATED in the same pass; a scale-out without live members
// never leaves ACTIVE.
func (g *group) startDrain(m *coord.Migration, now time.Time, drainStuck bool) {
	live := g.live()
	noLiveScaleIn := len(live) == 0 && m.ToShardCount < m.FromShardCount
	if !noLiveScaleIn {
		if len(live) == 0 || g.state != coord.GroupStable {
			return
		}
		for _, mb := range live {
			if !slices.Equal(mb.current, g.target[mb.id]) {
				return
			}
		}
	}
	m.State, m.UpdatedAt = coord.MigrationDraining, now
	g.bump(true)
	g.reconcile()
	if noLiveScaleIn {
		g.completeDrain(m, now, drainStuck)
	}
}

// completeDrain moves DRAINING -> DEPRECATED once no live member holds or
// revokes a removed shard and Redis shows the removed shards drained
// (drainStuck stands for a Redis group with pending entries or unknown lag).
func (g *group) completeDrain(m *coord.Migration, now time.Time, drainStuck bool) {
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
	g.bump(false)
	g.reconcile()
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
	g.bump(true)
	g.reconcile()
	return true
}
