// Package reach keeps, per service shardgate talks to (GitHub, each
// coordinator), how its last request ended: answered, or not and why. The
// status page shows it; it is what this process saw, not a probe.
package reach

import (
	"net/http"
	"sort"
	"sync"
	"time"
)

// Seen is how the last request to a service ended.
type Seen struct {
	Service string
	// OK is false when no answer came (refused, timed out, cut) or the
	// answer was a server error (5xx): the service is not doing its part.
	OK bool
	// At is when the last request ended; Since when OK last changed.
	At, Since time.Time
	// Error is why the last request failed ("" when OK): the transport's
	// error or the HTTP status, redacted.
	Error string
}

// Tracker records requests through the transports it wraps. Safe for
// concurrent use; the zero value is not: use New.
type Tracker struct {
	now    func() time.Time
	redact func(string) string
	mu     sync.Mutex
	seen   map[string]Seen
}

// New returns a tracker; redact (may be nil) removes secrets from the
// errors it keeps.
func New(now func() time.Time, redact func(string) string) *Tracker {
	if now == nil {
		now = time.Now
	}
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &Tracker{now: now, redact: redact, seen: map[string]Seen{}}
}

// Observe records how one request to service ended.
func (t *Tracker) Observe(service string, resp *http.Response, err error) {
	if t == nil {
		return
	}
	s := Seen{Service: service, OK: true, At: t.now().UTC()}
	switch {
	case err != nil:
		s.OK, s.Error = false, t.redact(err.Error())
	case resp.StatusCode >= 500:
		s.OK, s.Error = false, "answered "+resp.Status
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s.Since = s.At
	if old, ok := t.seen[service]; ok && old.OK == s.OK {
		s.Since = old.Since
	}
	t.seen[service] = s
}

// All is the last request to every service seen, by service name.
func (t *Tracker) All() []Seen {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	out := make([]Seen, 0, len(t.seen))
	for _, s := range t.seen {
		out = append(out, s)
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Service < out[j].Service })
	return out
}

// Transport observes every request through next as one to service; name
// (may be nil) names the service per request instead (a coordinator by its
// host).
func (t *Tracker) Transport(service string, name func(*http.Request) string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return transport{t: t, service: service, name: name, next: next}
}

type transport struct {
	t       *Tracker
	service string
	name    func(*http.Request) string
	next    http.RoundTripper
}

func (tr transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tr.next.RoundTrip(req)
	service := tr.service
	if tr.name != nil {
		service = tr.name(req)
	}
	if req.Context().Err() == nil || err == nil {
		tr.t.Observe(service, resp, err)
	}
	return resp, err
}
