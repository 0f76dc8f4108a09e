package coordsim

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"

	"github.com/shardgate/shardgate/coord"
)

type createBody struct {
	InitialShardCount *int   `json:"initialShardCount"`
	RequestedBy       string `json:"requestedBy"`
	Reason            string `json:"reason"`
}

type scaleBody struct {
	TargetShardCount *int   `json:"targetShardCount"`
	RequestedBy      string `json:"requestedBy"`
	Reason           string `json:"reason"`
}

func (s *Sim) lookup(c *call) (*group, reply, bool) {
	g := s.groups[[2]string{c.r.PathValue("streamPrefix"), c.r.PathValue("consumerGroup")}]
	if g == nil {
		return nil, fail(http.StatusNotFound, coord.CodeGroupNotFound, "group %s/%s not found", c.r.PathValue("streamPrefix"), c.r.PathValue("consumerGroup")), false
	}
	return g, reply{}, true
}

// validCreate checks a create body and returns the initial shard count.
func validCreate(c *call) (int, reply, bool) {
	var b createBody
	p := c.r.PathValue("streamPrefix")
	switch {
	case !decode(c, &b):
		return 0, fail(http.StatusBadRequest, coord.CodeInvalidRequest, "request body must be JSON"), false
	case strings.TrimSpace(b.RequestedBy) == "":
		return 0, fail(http.StatusBadRequest, coord.CodeInvalidRequest, "requestedBy must not be blank"), false
	case b.InitialShardCount != nil && *b.InitialShardCount < 1:
		return 0, fail(http.StatusBadRequest, coord.CodeInvalidRequest, "initialShardCount must be at least 1"), false
	case strings.ContainsAny(p, "{}") || strings.ContainsAny(c.r.PathValue("consumerGroup"), "{}"):
		return 0, fail(http.StatusBadRequest, coord.CodeInvalidRequest, "names must not contain { or }"), false
	}
	if b.InitialShardCount == nil {
		return DefaultInitialShardCount, reply{}, true
	}
	return *b.InitialShardCount, reply{}, true
}

// createStream is the official create: one group named like the prefix, which
// no consumer joins (coordinator.md §1 "official create quirk").
func (s *Sim) createStream(c *call) reply {
	n, rep, okk := validCreate(c)
	if !okk {
		return rep
	}
	p := c.r.PathValue("streamPrefix")
	if len(s.prefixGroups(p)) > 0 {
		return fail(http.StatusConflict, coord.CodeStreamPrefixExists, "stream prefix %s already exists", p)
	}
	g := newGroup(p, p, n)
	s.groups[[2]string{p, p}] = g
	return ok(http.StatusCreated, coord.StreamCreated{StreamPrefix: p, ShardCount: g.shardCount, MetadataVersion: g.metadataVersion})
}

func (s *Sim) createGroup(c *call) reply {
	n, rep, okk := validCreate(c)
	if !okk {
		return rep
	}
	k := [2]string{c.r.PathValue("streamPrefix"), c.r.PathValue("consumerGroup")}
	if s.groups[k] != nil {
		return fail(http.StatusConflict, coord.CodeGroupAlreadyExists, "group %s/%s already exists", k[0], k[1])
	}
	g := newGroup(k[0], k[1], n)
	s.groups[k] = g
	// The create answers before any consumer joined (EMPTY at 1/1/1); the
	// simulated consumers join right after, as waiting consumers would.
	created := g.view()
	g.setLiveMembers(s.membersPerGroup)
	return ok(http.StatusCreated, created)
}

func (s *Sim) getGroup(c *call) reply {
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	return ok(http.StatusOK, g.view())
}

func (s *Sim) routing(c *call) reply {
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	return ok(http.StatusOK, g.routing())
}

// deleteGroup refuses live members without force with 409 (the code; the docs
// and OpenAPI say 422). It does not look at active migrations.
func (s *Sim) deleteGroup(c *call) reply {
	var b struct {
		RequestedBy, Reason string
		Force               bool
	}
	if !decode(c, &b) || strings.TrimSpace(b.RequestedBy) == "" || strings.TrimSpace(b.Reason) == "" {
		return fail(http.StatusBadRequest, coord.CodeInvalidRequest, "requestedBy and reason are required")
	}
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	if len(g.live()) > 0 && !b.Force {
		return fail(http.StatusConflict, coord.CodeGroupHasActiveMembers, "group %s/%s has %d live members", g.prefix, g.name, len(g.live()))
	}
	snap := g.view()
	delete(s.groups, [2]string{g.prefix, g.name})
	return ok(http.StatusOK, snap)
}

func validScale(c *call) (int, reply, bool) {
	var b scaleBody
	switch {
	case !decode(c, &b):
		return 0, fail(http.StatusBadRequest, coord.CodeInvalidRequest, "request body must be JSON"), false
	case b.TargetShardCount == nil || *b.TargetShardCount < 0:
		return 0, fail(http.StatusBadRequest, coord.CodeInvalidRequest, "targetShardCount must be at least 0"), false
	case strings.TrimSpace(b.RequestedBy) == "" || strings.TrimSpace(b.Reason) == "":
		return 0, fail(http.StatusBadRequest, coord.CodeInvalidRequest, "requestedBy and reason are required"), false
	}
	return *b.TargetShardCount, reply{}, true
}

// blocksScale reports whether g's active migration refuses a scale to target:
// only a PREPARING one with the same target is resumed.
func blocksScale(g *group, target int) bool {
	m := g.active()
	return m != nil && !(m.State == coord.MigrationPreparing && m.ToShardCount == target)
}

// syncInProgress refuses scale and rollback while a metadata sync is open
// (requireNoMetadataCorrection; see sync.go).
func syncInProgress(g *group) (reply, bool) {
	if g.correction == nil {
		return reply{}, false
	}
	return fail(http.StatusConflict, coord.CodeMetadataSyncInProgress, "Coordinator metadata sync is in progress for this group"), true
}

// scaleOne runs the per-group scale steps; ok=false carries the error reply.
func (s *Sim) scaleOne(c *call, g *group, target int) (coord.Migration, reply, bool) {
	m := g.active()
	if m == nil {
		if g.shardCount == target {
			// Same count: a DEPRECATED "noop" migration that is never stored (DIFF).
			return coord.Migration{ReshardingID: coord.NoopReshardingID, FromShardCount: target, ToShardCount: target,
				State: coord.MigrationDeprecated, CreatedAt: c.now, UpdatedAt: c.now}, reply{}, true
		}
		m = &coord.Migration{ReshardingID: "reshard-" + uuid(), FromShardCount: g.shardCount, ToShardCount: target,
			State: coord.MigrationPreparing, CreatedAt: c.now, UpdatedAt: c.now}
		g.migrations = append(g.migrations, m)
		g.activeID = m.ReshardingID
	}
	k := [2]string{g.prefix, g.name}
	if s.faults.provisioningFail[k] {
		delete(s.faults.provisioningFail, k)
		return coord.Migration{}, fail(http.StatusServiceUnavailable, coord.CodeProvisioningFailed,
			"provisioning %d shards of %s/%s failed", target, g.prefix, g.name), false
	}
	g.activate(m, c.now)
	return *m, reply{}, true
}

func (s *Sim) scaleStream(c *call) reply {
	target, rep, valid := validScale(c)
	if !valid {
		return rep
	}
	p := c.r.PathValue("streamPrefix")
	groups := s.prefixGroups(p)
	if len(groups) == 0 {
		return fail(http.StatusNotFound, coord.CodeStreamNotFound, "stream %s has no groups", p)
	}
	for _, g := range groups {
		if rep, busy := syncInProgress(g); busy {
			return rep
		}
		if blocksScale(g, target) {
			return fail(http.StatusConflict, coord.CodeActiveMigrationExists,
				"group %s/%s has active migration %s", g.prefix, g.name, g.activeID)
		}
	}
	out := coord.StreamScale{StreamPrefix: p, TargetShardCount: target, AffectedConsumerGroups: []string{}, Migrations: []coord.Migration{}}
	for _, g := range groups {
		m, rep, done := s.scaleOne(c, g, target)
		if !done {
			return rep
		}
		out.AffectedConsumerGroups = append(out.AffectedConsumerGroups, g.name)
		out.Migrations = append(out.Migrations, m)
	}
	return ok(http.StatusAccepted, out)
}

func (s *Sim) scaleGroup(c *call) reply {
	target, rep, valid := validScale(c)
	if !valid {
		return rep
	}
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	if rep, busy := syncInProgress(g); busy {
		return rep
	}
	if blocksScale(g, target) {
		return fail(http.StatusConflict, coord.CodeActiveMigrationExists, "group %s/%s has active migration %s", g.prefix, g.name, g.activeID)
	}
	m, rep, done := s.scaleOne(c, g, target)
	if !done {
		return rep
	}
	return ok(http.StatusAccepted, m)
}

func (s *Sim) getMigration(c *call) reply {
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	m := g.migration(c.r.PathValue("reshardingId"))
	if m == nil {
		return fail(http.StatusNotFound, coord.CodeMigrationNotFound, "migration %s not found", c.r.PathValue("reshardingId"))
	}
	return ok(http.StatusOK, *m)
}

func (s *Sim) rollback(c *call) reply {
	var b struct{ RequestedBy, Reason string }
	if !decode(c, &b) || strings.TrimSpace(b.RequestedBy) == "" || strings.TrimSpace(b.Reason) == "" {
		return fail(http.StatusBadRequest, coord.CodeInvalidRequest, "requestedBy and reason are required")
	}
	g, rep, found := s.lookup(c)
	if !found {
		return rep
	}
	if rep, busy := syncInProgress(g); busy {
		return rep
	}
	m := g.migration(c.r.PathValue("reshardingId"))
	if m == nil {
		return fail(http.StatusNotFound, coord.CodeMigrationNotFound, "migration %s not found", c.r.PathValue("reshardingId"))
	}
	if !g.rollback(m, c.now) {
		return fail(http.StatusUnprocessableEntity, coord.CodeRollbackNotAllowed,
			"migration %s is %s; only the active migration in ACTIVE can be rolled back", m.ReshardingID, m.State)
	}
	return ok(http.StatusAccepted, *m)
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
