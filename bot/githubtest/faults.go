package githubtest

import (
	"bytes"
	"net/http"
	"path"
	"strconv"
	"time"
)

// Recorded is one request the fake received, for assertions.
type Recorded struct {
	Method   string
	Path     string // URL path, e.g. /repos/acme/infra/check-runs
	RawQuery string
	Body     []byte
	// Status is what the fake answered.
	Status int
	// InstallationID is the installation the token belonged to; 0 for App
	// JWT calls, downloads and unauthenticated requests.
	InstallationID int64
}

type fault struct {
	method  string
	pattern string
	status  int
	header  http.Header
}

// FailNext makes the next request matching method and pattern fail once with
// status and headers, after it has been validated. pattern is either a spec
// path template ("/repos/{owner}/{repo}/check-runs") or a path.Match pattern
// on the request path ("/repos/acme/*/check-runs"); method "" matches any.
// A 403 or 429 is written as GitHub's secondary rate limit error, so
// go-github returns *github.AbuseRateLimitError (with "retry-after" in
// headers it carries RetryAfter).
func (s *Server) FailNext(method, pattern string, status int, headers map[string]string) {
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fault{method: method, pattern: pattern, status: status, header: h})
}

// takeFault consumes the first fault matching the request; callers hold s.mu.
func (s *Server) takeFault(method, reqPath, template string) (reply, bool) {
	for i, f := range s.faults {
		if f.method != "" && f.method != method {
			continue
		}
		matched := f.pattern == template
		if !matched {
			matched, _ = path.Match(f.pattern, reqPath)
		}
		if !matched {
			continue
		}
		s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		return faultReply(f), true
	}
	return reply{}, false
}

func faultReply(f fault) reply {
	rep := reply{status: f.status, header: f.header.Clone()}
	switch f.status {
	case http.StatusForbidden, http.StatusTooManyRequests:
		rep.body = map[string]any{
			"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
			"documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#secondary-rate-limits",
		}
	default:
		rep.body = errorBody(http.StatusText(f.status))
	}
	return rep
}

// RetryAfter formats a duration as a retry-after header value.
func RetryAfter(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }

func (s *Server) record(r *http.Request, body []byte, installationID int64, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Recorded{
		Method:         r.Method,
		Path:           r.URL.Path,
		RawQuery:       r.URL.RawQuery,
		Body:           bytes.Clone(body),
		Status:         status,
		InstallationID: installationID,
	})
}

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.requests...)
}

// RequestCount counts logged requests with that method whose path matches
// a path.Match pattern.
func (s *Server) RequestCount(method, pattern string) int {
	n := 0
	for _, r := range s.Requests() {
		if m, _ := path.Match(pattern, r.Path); m && (method == "" || r.Method == method) {
			n++
		}
	}
	return n
}
