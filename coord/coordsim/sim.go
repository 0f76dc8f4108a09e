// Package coordsim is an in-process Redis Stream Coordinator that follows
// docs/coordinator.md (the coordinator's code behaviour, DIFF notes included):
// groups, stream-level scale with per-group migrations that advance on Tick,
// the coordinator's version bumps and invariant checks, rollback rules,
// monitoring reads, Basic and bearer auth with roles, an audit trail with the
// interceptor's values, metadata restores (Backup, Restore) with the metadata
// sync they start, and fault injection. It serves http.Handler, so tests mount it on
// httptest and `shardgate coordsim` serves it standalone.
package coordsim

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/shardgate/shardgate/internal/loop"
)

// Defaults of a new Sim.
const (
	DefaultMembersPerGroup   = 2
	DefaultInitialShardCount = 12
	DefaultTokenTTL          = 7 * 24 * time.Hour
	DefaultCoordinatorID     = "coordsim-1"
)

// Sim is the simulated coordinator. All methods are safe for concurrent use.
type Sim struct {
	mu              sync.Mutex
	clock           Clock
	coordinatorID   string
	users           map[string]User
	secret          []byte
	tokenTTL        time.Duration
	membersPerGroup int
	groups          map[[2]string]*group
	auditW          io.Writer
	audit           []AuditEvent
	faults          faults
	mux             *http.ServeMux
}

// Option configures a Sim.
type Option func(*Sim)

// WithClock sets the time source (a fakeclock.Clock in tests).
func WithClock(c Clock) Option { return func(s *Sim) { s.clock = c } }

// WithUsers replaces the default admin/password user; only these users exist.
func WithUsers(users ...User) Option {
	return func(s *Sim) {
		if len(users) == 0 {
			return
		}
		s.users = map[string]User{}
		for _, u := range users {
			s.users[u.Name] = u
		}
	}
}

// WithMembersPerGroup sets how many live members each compat-created group gets
// (0 allowed: such a group stays EMPTY and a scale-out on it never completes).
func WithMembersPerGroup(n int) Option {
	return func(s *Sim) {
		if n >= 0 {
			s.membersPerGroup = n
		}
	}
}

// WithAuditWriter also writes each audit event as one JSON line to w.
func WithAuditWriter(w io.Writer) Option { return func(s *Sim) { s.auditW = w } }

// New returns an empty simulator.
func New(opts ...Option) *Sim {
	s := &Sim{
		clock:           realClock{},
		coordinatorID:   DefaultCoordinatorID,
		users:           map[string]User{"admin": {Name: "admin", Password: "password", Roles: AllRoles()}},
		tokenTTL:        DefaultTokenTTL,
		membersPerGroup: DefaultMembersPerGroup,
		groups:          map[[2]string]*group{},
		secret:          make([]byte, 32),
	}
	_, _ = rand.Read(s.secret)
	for _, o := range opts {
		o(s)
	}
	s.mux = s.routes()
	return s
}

// Tick is one event-loop tick: every live member heartbeats, then each group's
// active migration moves at most one step (group.tick).
func (s *Sim) Tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for _, g := range s.sortedGroups() {
		g.tick(now, s.faults.stuckDraining[g.prefix])
	}
}

// Run ticks every interval until ctx ends (the standalone server's event loop).
func (s *Sim) Run(ctx context.Context, interval time.Duration) {
	loop.Every(ctx, interval, nil, func(context.Context) bool { s.Tick(); return true })
}

// SetLiveMembers sets a group's number of live members; removed members expire.
// It reports false when the group does not exist.
func (s *Sim) SetLiveMembers(prefix, groupName string, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[[2]string{prefix, groupName}]
	if g == nil || n < 0 {
		return false
	}
	g.setLiveMembers(n)
	return true
}

// Audit returns a copy of every audit event so far.
func (s *Sim) Audit() []AuditEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AuditEvent(nil), s.audit...)
}

// sortedGroups returns all groups by (prefix, name); s.mu must be held.
func (s *Sim) sortedGroups() []*group {
	out := make([]*group, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].prefix != out[j].prefix {
			return out[i].prefix < out[j].prefix
		}
		return out[i].name < out[j].name
	})
	return out
}

// prefixGroups returns the groups of one prefix in name order; s.mu must be held.
func (s *Sim) prefixGroups(prefix string) []*group {
	var out []*group
	for _, g := range s.sortedGroups() {
		if g.prefix == prefix {
			out = append(out, g)
		}
	}
	return out
}
