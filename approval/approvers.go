package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/webhook"
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

// isApprover says whether login is an approver: listed by name, or an active
// member of an approver team.
func (s *Planner) isApprover(ctx context.Context, gh ghapp.Teams, login string) (bool, error) {
	if login == "" {
		return false, nil
	}
	if s.cfg.IsApproverUser(login) {
		return true, nil
	}
	for _, team := range s.cfg.ApproverTeams {
		if member, ok := s.teamCache.get(team, login, s.now()); ok {
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
		s.teamCache.put(team, login, member, s.now())
		if member {
			return true, nil
		}
	}
	return false, nil
}

// Teams drops cached team answers when GitHub reports a membership or a team
// change (the App must subscribe to the membership and team events).
type Teams struct{ *Base }

var _ webhook.EventHandler = (*Teams)(nil)

// Handles implements webhook.EventHandler.
func (h *Teams) Handles() []string { return []string{"membership", "team"} }

// Handle implements webhook.EventHandler.
func (h *Teams) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	log := logctx.Logger(ctx).WithField("event", eventType)
	switch eventType {
	case "membership":
		ev, err := parse[*github.MembershipEvent](eventType, payload)
		if err != nil {
			return err
		}
		h.s.planner.teamCache.forgetLogin(ev.GetMember().GetLogin())
		log.WithField("action", ev.GetAction()).WithField("team", ev.GetOrg().GetLogin()+"/"+ev.GetTeam().GetSlug()).Info("team membership changed; cached answers dropped")
	default:
		ev, err := parse[*github.TeamEvent](eventType, payload)
		if err != nil {
			return err
		}
		// A team renamed, moved under another parent or deleted changes the
		// answers for all its members: drop them all.
		h.s.planner.teamCache.forgetAll()
		log.WithField("action", ev.GetAction()).WithField("team", ev.GetOrg().GetLogin()+"/"+ev.GetTeam().GetSlug()).Info("team changed; cached answers dropped")
	}
	return nil
}
