package coordsim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shardgate/shardgate/coord"
)

const maxBodyBytes = 1 << 20

// call is one authenticated request as a handler sees it.
type call struct {
	r    *http.Request
	body []byte
	p    principal
	now  time.Time
}

// reply is what a handler answers; body nil means no body.
type reply struct {
	status     int
	body       any
	retryAfter int
}

func ok(status int, body any) reply { return reply{status: status, body: body} }

func fail(status int, code, format string, args ...any) reply {
	return reply{status: status, body: coord.ErrorBody{
		Status: coord.StatusName(status), ErrorCode: code, Message: fmt.Sprintf(format, args...),
	}}
}

// ServeHTTP implements http.Handler.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Sim) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("POST /coord/v1/auth/login", s.login)
	h := func(pattern string, fn func(*call) reply) { m.Handle(pattern, s.guard(fn)) }
	h("POST /coord/v1/streams/{streamPrefix}", s.createStream)
	h("POST /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}", s.createGroup)
	h("GET /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}", s.getGroup)
	h("DELETE /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}", s.deleteGroup)
	h("GET /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/producer-routing", s.routing)
	h("POST /coord/v1/streams/{streamPrefix}/scale", s.scaleStream)
	h("POST /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/scale", s.scaleGroup)
	h("GET /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/migrations/{reshardingId}", s.getMigration)
	h("POST /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/migrations/{reshardingId}/rollback", s.rollback)
	h("GET /coord/v1/monitoring/health", s.health)
	h("GET /coord/v1/monitoring/groups", s.listGroups)
	h("GET /coord/v1/monitoring/streams/{streamPrefix}/groups/{consumerGroup}", s.getGroup)
	h("GET /coord/v1/monitoring/streams/{streamPrefix}/groups/{consumerGroup}/migrations", s.listMigrations)
	h("GET /coord/v1/monitoring/streams/{streamPrefix}/groups/{consumerGroup}/assignments", s.assignments)
	h("GET /coord/v1/monitoring/streams/{streamPrefix}/groups/{consumerGroup}/members", s.members)
	h("GET /coord/v1/monitoring/streams/{streamPrefix}/groups/{consumerGroup}/consumption", s.consumption)
	h("GET /coord/v1/monitoring/streams/{streamPrefix}/groups/{consumerGroup}/offsets", s.offsets)
	h("/", func(c *call) reply {
		return fail(http.StatusNotFound, "NOT_FOUND", "no handler for %s %s", c.r.Method, c.r.URL.Path)
	})
	return m
}

// guard runs auth, role checks, fault injection and audit around a handler,
// holding s.mu for the handler's whole run so every request sees one state.
func (s *Sim) guard(fn func(*call) reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.wait(r)
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
		if err != nil {
			body = nil
		}
		mutation := r.Method != http.MethodGet && r.Method != http.MethodHead
		audited := mutation && actions[r.Pattern] != ""

		s.mu.Lock()
		defer s.mu.Unlock()
		c := &call{r: r, body: body, now: s.clock.Now()}
		var rep reply
		// Spring reads the body only once a handler runs: a request refused by the
		// auth or rate-limit interceptors leaves no body in the audit.
		bodyRead := true
		p, authed := s.authenticate(r)
		c.p = p
		switch {
		case !authed:
			w.Header().Set("WWW-Authenticate", `Basic realm="redis-stream-coordinator"`)
			rep, bodyRead = reply{status: http.StatusUnauthorized}, false
		case !p.allowed(r.Method, r.URL.Path):
			rep, bodyRead = reply{status: http.StatusForbidden}, false
		case mutation && s.faults.rateLimitLeft > 0:
			s.faults.rateLimitLeft--
			bodyRead = false
			rep = fail(http.StatusTooManyRequests, coord.CodeRateLimitExceeded, "Coordinator API rate limit exceeded")
			rep.retryAfter = max(1, int(s.faults.retryAfter.Round(time.Second)/time.Second))
		case s.faults.failLeft > 0:
			s.faults.failLeft--
			rep = fail(s.faults.failStatus, s.faults.failCode, "injected failure")
		case mutation && s.faults.terminating:
			rep = fail(http.StatusServiceUnavailable, coord.CodeCoordinatorTerminating, "coordinator is terminating")
		default:
			rep = fn(c)
		}
		write(w, rep)
		if audited {
			if !bodyRead {
				body = nil
			}
			s.record(s.buildAudit(r, body, p, authed, rep.status, start))
		}
	})
}

// wait applies the slow-response fault without holding the lock.
func (s *Sim) wait(r *http.Request) {
	s.mu.Lock()
	d := s.faults.delay
	s.mu.Unlock()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

func write(w http.ResponseWriter, rep reply) {
	if rep.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(rep.retryAfter))
	}
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	b, err := json.Marshal(rep.body)
	if err != nil {
		http.Error(w, "encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_, _ = w.Write(b)
}

// LoginResponse is the body of POST /auth/login's 200. shardgate's client
// sends Basic credentials and never logs in; the simulator answers logins
// for the other clients of a coordinator.
type LoginResponse struct {
	AccessToken      string    `json:"accessToken"`
	TokenType        string    `json:"tokenType"`
	ExpiresAt        time.Time `json:"expiresAt"`
	ExpiresInSeconds int64     `json:"expiresInSeconds"`
	Roles            []string  `json:"roles"`
}

func (s *Sim) login(w http.ResponseWriter, r *http.Request) {
	s.wait(r)
	var in struct{ Username, Password string }
	user, pass, basic := r.BasicAuth()
	if !basic {
		b, _ := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
		if json.Unmarshal(b, &in) == nil {
			user, pass = in.Username, in.Password
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, authed := s.checkPassword(user, pass)
	if !authed {
		w.Header().Set("WWW-Authenticate", `Basic realm="redis-stream-coordinator"`)
		write(w, reply{status: http.StatusUnauthorized})
		return
	}
	exp := s.clock.Now().Add(s.tokenTTL).Truncate(time.Second)
	write(w, ok(http.StatusOK, LoginResponse{
		AccessToken: s.issueToken(p, exp), TokenType: "Bearer", ExpiresAt: exp,
		ExpiresInSeconds: int64(s.tokenTTL / time.Second), Roles: p.roleNames(),
	}))
}

// decode reads a JSON body; Spring ignores unknown fields, so this does too.
func decode(c *call, v any) bool {
	return len(strings.TrimSpace(string(c.body))) > 0 && json.Unmarshal(c.body, v) == nil
}
