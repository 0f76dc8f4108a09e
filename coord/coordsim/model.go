package coordsim

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/coord"
)

// member is one simulated consumer runtime and its member record.
type member struct {
	id       string
	state    coord.MemberState
	epoch    int64
	current  []int
	revoking []int
	// seen is the metadataVersion the consumer last got from the coordinator; it
	// sends it on every heartbeat. Higher than the group's means the group's
	// metadata was restored to older data (see sync.go).
	seen int64
}

// record is the group's stored metadata: what a Redis backup holds and a
// restore brings back (Backup, Restore). Members are not part of it: each live
// consumer rewrites its own record on its next heartbeat.
type record struct {
	state           coord.GroupState
	groupEpoch      int64
	assignmentEpoch int64
	metadataVersion int64
	shardCount      int
	activeID        string
	migrations      []*coord.Migration
	target          map[string][]int
	correction      *correction
}

func (r record) clone() record {
	out := r
	out.migrations = make([]*coord.Migration, len(r.migrations))
	for i, m := range r.migrations {
		cp := *m
		out.migrations[i] = &cp
	}
	out.target = make(map[string][]int, len(r.target))
	for id, shards := range r.target {
		out.target[id] = slices.Clone(shards)
	}
	if r.correction != nil {
		c := *r.correction
		c.acked = make(map[string]bool, len(r.correction.acked))
		for id := range r.correction.acked {
			c.acked[id] = true
		}
		out.correction = &c
	}
	return out
}

// group is one coordinator group record plus its simulated consumers.
type group struct {
	prefix, name string
	record
	members    []*member
	nextMember int
	// stalled is a fault: reconcile does not run (SetReconcileStalled).
	stalled bool
}

// newGroup is createGroupOnce: epochs 1/0, version 1, EMPTY, then one
// reconcile, so a reader sees EMPTY at 1/1/1. Consumers join afterwards.
func newGroup(prefix, name string, shards int) *group {
	g := &group{prefix: prefix, name: name, record: record{
		state: coord.GroupEmpty, groupEpoch: 1, metadataVersion: 1, shardCount: shards, target: map[string][]int{},
	}}
	g.reconcile()
	return g
}

// bump is bumpMetadata: every state change raises metadataVersion, changes
// that affect assignment also groupEpoch.
func (g *group) bump(groupEpoch bool) {
	if groupEpoch {
		g.groupEpoch++
	}
	g.metadataVersion++
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

func (g *group) memberByID(id string) *member {
	for _, m := range g.members {
		if m.id == id {
			return m
		}
	}
	return nil
}

// setLiveMembers grows or shrinks the live set. Each join is a first heartbeat
// (registerOrRejoinMember: one bump each); the members removed expire in one
// pass (expireMembers: one bump) and give up their shards at once, as if their
// stale records were already pruned.
func (g *group) setLiveMembers(n int) {
	live := g.live()
	for i := len(live); i < n; i++ {
		g.nextMember++
		g.bump(true)
		g.members = append(g.members, &member{id: fmt.Sprintf("%s-member-%d", g.name, g.nextMember),
			state: coord.MemberActive, epoch: g.groupEpoch, current: []int{}, seen: g.metadataVersion})
	}
	if n < len(live) {
		for _, m := range live[n:] {
			m.state, m.epoch, m.current, m.revoking = coord.MemberExpired, m.epoch+1, []int{}, nil
		}
		g.bump(true)
	}
	g.reconcile()
}

// reconcile computes the target assignment and the group state. ASSIGNING is
// set and overwritten inside it, so no reader ever sees it; assignmentEpoch
// always equals groupEpoch afterwards.
func (g *group) reconcile() {
	if g.stalled {
		return
	}
	live := g.live()
	g.target = map[string][]int{}
	g.assignmentEpoch = g.groupEpoch
	if len(live) == 0 {
		g.state = coord.GroupEmpty
		return
	}
	for _, m := range live {
		g.target[m.id] = []int{}
	}
	for i := 0; i < g.shardCount; i++ {
		id := live[i%len(live)].id
		g.target[id] = append(g.target[id], i)
	}
	g.state = coord.GroupStable
	if g.convergencePending() {
		g.state = coord.GroupReconciling
	}
}

// blocked are the target shards of id that another live member still holds or
// revokes: they are granted only once that member reports them REVOKED.
func (g *group) blocked(id string) []int {
	var out []int
	for _, s := range g.target[id] {
		for _, m := range g.live() {
			if m.id != id && (slices.Contains(m.current, s) || slices.Contains(m.revoking, s)) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// convergencePending is hasPendingConvergence: some member does not hold
// exactly its grantable target, or waits for a shard another member holds. A
// member revoking a shard nobody targets (a removed shard) does not count: the
// group is STABLE while scale-in revokes are still in progress.
func (g *group) convergencePending() bool {
	for id, target := range g.target {
		m := g.memberByID(id)
		if m == nil {
			return true
		}
		blocked := g.blocked(id)
		var grantable []int
		for _, s := range target {
			if !slices.Contains(blocked, s) {
				grantable = append(grantable, s)
			}
		}
		if len(blocked) > 0 || !slices.Equal(m.current, grantable) {
			return true
		}
	}
	return false
}

// exchange is one ownership report of each of these members: finished revokes
// are reported REVOKED, shards no longer targeted start revoking, and targeted
// shards nobody else holds are taken.
func (g *group) exchange(ms []*member) {
	for _, m := range ms {
		if len(m.revoking) > 0 {
			m.revoking = nil
			continue
		}
		want := g.target[m.id]
		keep := []int{}
		for _, s := range m.current {
			if slices.Contains(want, s) {
				keep = append(keep, s)
			} else {
				m.revoking = append(m.revoking, s)
			}
		}
		m.current = keep
	}
	held := map[int]bool{}
	for _, m := range g.live() {
		for _, s := range append(slices.Clone(m.current), m.revoking...) {
			held[s] = true
		}
	}
	for _, m := range ms {
		for _, s := range g.target[m.id] {
			if !held[s] {
				m.current = append(m.current, s)
				held[s] = true
			}
		}
		sort.Ints(m.current)
	}
}

// invariantViolations is the coordinator's check, in its wording (a shard
// prints as Kotlin's ShardId(shardIndex=N)).
func (g *group) invariantViolations() []string {
	out := []string{}
	ids := make([]string, 0, len(g.target))
	for id := range g.target {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	owners := map[int][]string{}
	for _, id := range ids {
		if g.memberByID(id) == nil {
			out = append(out, "target assignment references unknown member "+id)
		}
		for _, s := range g.target[id] {
			owners[s] = append(owners[s], id)
		}
	}
	anyActive := slices.ContainsFunc(g.members, func(m *member) bool { return m.state == coord.MemberActive })
	for s := 0; s < g.shardCount; s++ {
		switch o := owners[s]; {
		case len(o) == 0 && anyActive:
			out = append(out, fmt.Sprintf("readable shard ShardId(shardIndex=%d) has no target owner", s))
		case len(o) > 1:
			out = append(out, fmt.Sprintf("readable shard ShardId(shardIndex=%d) has duplicate target owners [%s]", s, strings.Join(o, ", ")))
		}
	}
	if g.assignmentEpoch != g.groupEpoch && g.state != coord.GroupEmpty {
		out = append(out, fmt.Sprintf("assignmentEpoch %d does not match groupEpoch %d", g.assignmentEpoch, g.groupEpoch))
	}
	return out
}
