package metrics

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// coordOperations names each coordinator call by its method and path shape;
// the shape replaces every name (prefix, group, migration id) with "*", so no
// stream name reaches a label. A path of no known shape counts as "other".
var coordOperations = map[string]string{
	"POST /auth/login":                               "login",
	"GET /monitoring/health":                         "health",
	"GET /monitoring/groups":                         "list_groups",
	"POST /streams/*":                                "create_stream",
	"POST /streams/*/scale":                          "scale_stream",
	"GET /streams/*/groups/*":                        "get_group",
	"POST /streams/*/groups/*":                       "create_group",
	"DELETE /streams/*/groups/*":                     "delete_group",
	"POST /streams/*/groups/*/scale":                 "scale_group",
	"GET /streams/*/groups/*/producer-routing":       "producer_routing",
	"GET /streams/*/groups/*/migrations/*":           "get_migration",
	"POST /streams/*/groups/*/migrations/*/rollback": "rollback",
	"GET /monitoring/streams/*/groups/*/migrations":  "list_migrations",
	"GET /monitoring/streams/*/groups/*/assignments": "assignments",
	"GET /monitoring/streams/*/groups/*/members":     "members",
}

func coordOperationNames() []string {
	var out []string
	for _, op := range coordOperations {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// coordOperation maps a request to its operation. escapedPath keeps a name's
// escaped slashes (%2F) inside its segment.
func coordOperation(method, escapedPath string) string {
	i := strings.Index(escapedPath, "/coord/v1/")
	if i < 0 {
		return otherLabel
	}
	segs := strings.Split(escapedPath[i+len("/coord/v1"):], "/")[1:]
	for j := 1; j < len(segs); j++ {
		switch segs[j-1] {
		case "streams", "groups", "migrations":
			if segs[j] != "" {
				segs[j] = "*"
			}
		}
	}
	if op, ok := coordOperations[method+" /"+strings.Join(segs, "/")]; ok {
		return op
	}
	return otherLabel
}

func statusClass(code int) string {
	if code < 100 || code > 599 {
		return otherLabel
	}
	return strconv.Itoa(code/100) + "xx"
}

// CoordinatorClient returns base (nil: a default client) with a transport
// that counts every request by operation and status class ("error" when no
// response came: refused, timed out, cut).
func (m *Metrics) CoordinatorClient(base *http.Client) *http.Client {
	if m == nil {
		return base
	}
	hc := &http.Client{}
	if base != nil {
		c := *base
		hc = &c
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = coordTransport{next: next, m: m}
	return hc
}

type coordTransport struct {
	next http.RoundTripper
	m    *Metrics
}

func (t coordTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := coordOperation(req.Method, req.URL.EscapedPath())
	resp, err := t.next.RoundTrip(req)
	class := "error"
	if err == nil {
		class = statusClass(resp.StatusCode)
	}
	t.m.coordCalls.WithLabelValues(op, class).Inc()
	return resp, err
}
