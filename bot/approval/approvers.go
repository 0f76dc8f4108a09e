// Package approval decides who approves: whether a login is an approver (by
// name, or an active member of an approver team, answers kept a minute),
// which exception labels count (added by an approver who is not the author,
// for the current head, by GitHub's issue events), and the voiding of labels
// on a push. It also reads back the comments approvals are given in.
package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp"
)

// Team membership answers are reused for at most teamCacheTTL, and dropped at
// once when GitHub says a membership or a team changed: a removed approver
// loses the right within a minute even if that event is lost.
const (
	teamCacheTTL  = 60 * time.Second
	teamCacheSize = 4096
)

// teamCache remembers whether a login is an active member of a team. The LRU
// bounds its size and drops old entries; each entry also carries the server
// clock's time of the answer, so the TTL holds under an injected clock.
type teamCache struct {
	once sync.Once
	lru  *expirable.LRU[string, teamAnswer]
}

type teamAnswer struct {
	member bool
	at     time.Time
}

func (c *teamCache) cache() *expirable.LRU[string, teamAnswer] {
	c.once.Do(func() { c.lru = expirable.NewLRU[string, teamAnswer](teamCacheSize, nil, teamCacheTTL) })
	return c.lru
}

func teamKey(team, login string) string { return strings.ToLower(team) + "|" + strings.ToLower(login) }

func (c *teamCache) get(team, login string, now time.Time) (member, ok bool) {
	a, ok := c.cache().Get(teamKey(team, login))
	if !ok || now.Sub(a.at) >= teamCacheTTL {
		return false, false
	}
	return a.member, true
}

func (c *teamCache) put(team, login string, member bool, now time.Time) {
	c.cache().Add(teamKey(team, login), teamAnswer{member: member, at: now})
}

// forgetLogin drops every answer about login: a membership of a child team
// is a membership of its parents too, so no single key is enough.
func (c *teamCache) forgetLogin(login string) {
	suffix := "|" + strings.ToLower(login)
	for _, k := range c.cache().Keys() {
		if strings.HasSuffix(k, suffix) {
			c.cache().Remove(k)
		}
	}
}

func (c *teamCache) forgetAll() { c.cache().Purge() }

// Approvers are the approvers of a server's configuration: users by name and
// members of teams, whose answers GitHub gives and a cache keeps.
type Approvers struct {
	cfg   *serverconfig.Config
	now   func() time.Time
	cache teamCache
}

// NewApprovers are cfg's approvers; now is the clock of the team answers' TTL.
func NewApprovers(cfg *serverconfig.Config, now func() time.Time) *Approvers {
	return &Approvers{cfg: cfg, now: now}
}

// Text says who may add exception labels and attest.
func (s *Approvers) Text() string {
	var who []string
	// Named without "@": every edit of the comment would ping them again.
	who = append(who, s.cfg.ApproverUsers...)
	for _, t := range s.cfg.ApproverTeams {
		who = append(who, "a member of "+t)
	}
	return "an approver (" + strings.Join(who, ", ") + ") who is not the PR author"
}

// ForgetLogin drops the team answers about login (a membership changed).
func (s *Approvers) ForgetLogin(login string) { s.cache.forgetLogin(login) }

// ForgetAll drops every team answer (a team changed).
func (s *Approvers) ForgetAll() { s.cache.forgetAll() }

// IsApprover says whether login is an approver: listed by name, or an active
// member of an approver team.
func (s *Approvers) IsApprover(ctx context.Context, gh ghapp.Teams, login string) (bool, error) {
	if login == "" {
		return false, nil
	}
	if s.cfg.IsApproverUser(login) {
		return true, nil
	}
	for _, team := range s.cfg.ApproverTeams {
		if member, ok := s.cache.get(team, login, s.now()); ok {
			if member {
				return true, nil
			}
			continue
		}
		org, slug, _ := strings.Cut(team, "/")
		state, err := gh.TeamMembershipState(ctx, org, slug, login)
		member := false
		switch {
		case err == nil:
			member = state == "active"
		case errors.Is(err, ghapp.ErrNotFound):
		default:
			return false, fmt.Errorf("check membership of @%s in %s: %w", login, team, err)
		}
		s.cache.put(team, login, member, s.now())
		if member {
			return true, nil
		}
	}
	return false, nil
}
