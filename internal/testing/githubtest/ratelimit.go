package githubtest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// RateLimits are GitHub's documented limits as the fake enforces them, per
// installation; a zero field is a limit the fake does not enforce. Off by
// default: a Server without WithRateLimits answers as it always did.
type RateLimits struct {
	// Primary is each installation's request budget per Window (GitHub:
	// 5,000 an hour). Every answer to an installation carries
	// x-ratelimit-limit, -remaining, -used, -reset and -resource; at 0 the
	// request is refused with 403 and GitHub's "API rate limit exceeded"
	// until the reset. A GET answered 304 Not Modified (a matching
	// If-None-Match) is not counted, as on GitHub.
	Primary int
	// Window is how long a primary budget lasts (default an hour), on the
	// fake's clock (WithClock).
	Window time.Duration
	// Content is how many content-creating requests (POST, PATCH, PUT,
	// DELETE) an installation may make per ContentWindow (GitHub: about 80
	// a minute); beyond, 403 with Retry-After and GitHub's secondary-limit
	// message, and every request of the installation is refused until then.
	Content       int
	ContentWindow time.Duration // default a minute
	// RetryAfter is the Retry-After of a secondary-limit answer (default
	// ContentWindow's remainder, at least a second).
	RetryAfter time.Duration
}

// WithRateLimits makes the fake enforce GitHub's rate limits.
func WithRateLimits(l RateLimits) Option {
	return func(s *Server) { s.limits = l.withDefaults() }
}

// SetRateLimits starts enforcing l from now on, with fresh budgets (a test
// sets its scene up first, unlimited).
func (s *Server) SetRateLimits(l RateLimits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = l.withDefaults()
	s.installationLimits = map[int64]*installationLimits{}
}

func (l RateLimits) withDefaults() *RateLimits {
	if l.Window <= 0 {
		l.Window = time.Hour
	}
	if l.ContentWindow <= 0 {
		l.ContentWindow = time.Minute
	}
	return &l
}

// installationLimits is one installation's standing against RateLimits.
type installationLimits struct {
	used           int
	reset          time.Time
	content        int
	contentReset   time.Time
	secondaryUntil time.Time
}

// rateLimit charges the request to its installation's budgets, or refuses
// it for a limit; callers hold s.mu. The headers go on every answer; what
// the limits said of the request goes in c.limit.
func (s *Server) rateLimit(c *call) (http.Header, *reply) {
	if s.limits == nil || c.installationID == 0 {
		return nil, nil
	}
	h, rep, limited := s.chargeLimits(c)
	c.limit.limited = limited
	return h, rep
}

func (s *Server) chargeLimits(c *call) (http.Header, *reply, string) {
	l, now := s.limits, s.now()
	st := s.installationLimits[c.installationID]
	if st == nil {
		st = &installationLimits{}
		s.installationLimits[c.installationID] = st
	}
	if !now.Before(st.reset) {
		st.used, st.reset = 0, now.Add(l.Window).Truncate(time.Second)
	}
	if !now.Before(st.contentReset) {
		st.content, st.contentReset = 0, now.Add(l.ContentWindow)
	}
	c.limit.budgeted, c.limit.remaining, c.limit.reset = l.Primary > 0, max(l.Primary-st.used, 0), st.reset
	c.limit.inRetryAfter = now.Before(st.secondaryUntil)
	h := http.Header{}
	primaryHeaders := func() { s.primaryHeaders(h, st) }
	if now.Before(st.secondaryUntil) {
		primaryHeaders()
		return h, secondaryLimited(h, st.secondaryUntil.Sub(now)), "secondary"
	}
	if l.Primary > 0 && st.used >= l.Primary {
		primaryHeaders()
		rep := &reply{status: http.StatusForbidden, header: h, body: map[string]any{
			"message":           fmt.Sprintf("API rate limit exceeded for installation ID %d.", c.installationID),
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
		}}
		return h, rep, "primary"
	}
	if l.Content > 0 && contentCreating(c.r.Method) {
		if st.content >= l.Content {
			wait := l.RetryAfter
			if wait <= 0 {
				wait = max(st.contentReset.Sub(now), time.Second)
			}
			st.secondaryUntil = now.Add(wait)
			primaryHeaders()
			return h, secondaryLimited(h, wait), "secondary"
		}
		st.content++
	}
	st.used++
	primaryHeaders()
	return h, nil, ""
}

// primaryHeaders sets the x-ratelimit-* headers of an installation's
// standing; callers hold s.mu.
func (s *Server) primaryHeaders(h http.Header, st *installationLimits) {
	l := s.limits
	if l.Primary <= 0 {
		return
	}
	h.Set("X-Ratelimit-Limit", strconv.Itoa(l.Primary))
	h.Set("X-Ratelimit-Remaining", strconv.Itoa(max(l.Primary-st.used, 0)))
	h.Set("X-Ratelimit-Used", strconv.Itoa(st.used))
	h.Set("X-Ratelimit-Reset", strconv.FormatInt(st.reset.Unix(), 10))
	h.Set("X-Ratelimit-Resource", "core")
}

// refund gives back what rateLimit charged for a request answered 304 Not
// Modified, which GitHub does not count against the primary limit, and
// rewrites the answer's headers h to say so; callers hold s.mu.
func (s *Server) refund(c *call, h http.Header) {
	if s.limits == nil || c.installationID == 0 {
		return
	}
	st := s.installationLimits[c.installationID]
	if st == nil || st.used == 0 {
		return
	}
	st.used--
	s.primaryHeaders(h, st)
}

func contentCreating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// secondaryLimited is GitHub's answer to a request over a secondary limit.
func secondaryLimited(h http.Header, wait time.Duration) *reply {
	secs := int((wait + time.Second - 1) / time.Second)
	h.Set("Retry-After", strconv.Itoa(max(secs, 1)))
	return &reply{status: http.StatusForbidden, header: h, body: map[string]any{
		"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
		"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
	}}
}
