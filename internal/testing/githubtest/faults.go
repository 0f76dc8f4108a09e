package githubtest

import (
	"bytes"
	"net"
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
	// Limited is the rate limit that refused the request (WithRateLimits):
	// "primary", "secondary", or "" when none did.
	Limited string
	// Budgeted says a primary limit applied to the request, and Remaining
	// is the installation's primary budget when it arrived: a request that
	// arrived at 0 was sent while the budget was spent.
	Budgeted  bool
	Remaining int
	// Reset is when that budget's window ends (a new window, a new budget).
	Reset time.Time
	// InRetryAfter says it arrived while a secondary limit's Retry-After
	// was in force (the request that met the limit did not).
	InRetryAfter bool
}

// limitSeen is what the rate limits said of a request when it arrived.
type limitSeen struct {
	limited      string
	budgeted     bool
	remaining    int
	reset        time.Time
	inRetryAfter bool
}

// Fault is a failure the fake injects into the requests that match it.
type Fault struct {
	// Method matches the request method; "" matches any.
	Method string
	// Pattern is a spec path template ("/repos/{owner}/{repo}/check-runs") or
	// a path.Match pattern on the request path ("/repos/acme/*/check-runs");
	// "" matches every API request. Faults apply after authentication, so
	// token requests (/app/installations/{id}/access_tokens) match too.
	Pattern string
	// Times is how many matching requests fail (default 1).
	Times int
	// Status is the answer (default 502 Bad Gateway); see FailNext for 403/429.
	Status int
	Header http.Header
	// After performs the request first and fails only its answer: GitHub did
	// the work (created the comment or the check run), the client never heard.
	After bool
	// Reset closes the connection with a TCP reset instead of answering.
	Reset bool
	// Hang never answers: the request is held until the client gives up (its
	// context or connection ends), ReleaseHangs is called or the fake closes.
	Hang bool
}

type fault struct {
	Fault
	left int
}

// answered is what a fault does to the answer of a request it matched.
type answered int

const (
	answerNormally answered = iota
	answerReset
	answerHang
)

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
	s.Inject(Fault{Method: method, Pattern: pattern, Status: status, Header: h})
}

// Inject adds a fault; faults are matched in the order they were added, and
// a request consumes at most one.
func (s *Server) Inject(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	if f.Status == 0 {
		f.Status = http.StatusBadGateway
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fault{Fault: f, left: f.Times})
}

// PendingFaults is how many injected failures have not fired yet.
func (s *Server) PendingFaults() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.faults {
		n += f.left
	}
	return n
}

// ReleaseHangs answers every request a Hang fault holds (with its status);
// later Hang faults hold requests again.
func (s *Server) ReleaseHangs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.hangs)
	s.hangs = make(chan struct{})
}

// takeFault consumes one firing of the first fault matching the request;
// callers hold s.mu.
func (s *Server) takeFault(method, reqPath, template string) (Fault, bool) {
	for i := range s.faults {
		f := &s.faults[i]
		if f.Method != "" && f.Method != method {
			continue
		}
		matched := f.Pattern == "" || f.Pattern == template
		if !matched {
			matched, _ = path.Match(f.Pattern, reqPath)
		}
		if !matched {
			continue
		}
		f.left--
		taken := f.Fault
		if f.left <= 0 {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		}
		return taken, true
	}
	return Fault{}, false
}

// faultReply is the answer of a fault, and what to do instead of sending it.
func faultReply(f Fault) (reply, answered) {
	rep := reply{status: f.Status, header: f.Header.Clone()}
	if rep.header == nil {
		rep.header = http.Header{}
	}
	switch f.Status {
	case http.StatusForbidden, http.StatusTooManyRequests:
		rep.body = map[string]any{
			"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
			"documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#secondary-rate-limits",
		}
	default:
		rep.body = errorBody(http.StatusText(f.Status))
	}
	switch {
	case f.Reset:
		return rep, answerReset
	case f.Hang:
		return rep, answerHang
	}
	return rep, answerNormally
}

// resetConn closes the request's connection with a TCP reset (SO_LINGER 0).
func resetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// hang holds a request until the client gives up, ReleaseHangs or Close.
func (s *Server) hang(r *http.Request) {
	s.mu.Lock()
	release := s.hangs
	s.mu.Unlock()
	select {
	case <-r.Context().Done():
	case <-release:
	case <-s.closed:
	}
}

// RetryAfter formats a duration as a retry-after header value.
func RetryAfter(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }

func (s *Server) record(r *http.Request, body []byte, installationID int64, status int, seen limitSeen) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Recorded{
		Method:         r.Method,
		Path:           r.URL.Path,
		RawQuery:       r.URL.RawQuery,
		Body:           bytes.Clone(body),
		Status:         status,
		InstallationID: installationID,
		Limited:        seen.limited,
		Budgeted:       seen.budgeted,
		Remaining:      seen.remaining,
		Reset:          seen.reset,
		InRetryAfter:   seen.inRetryAfter,
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
