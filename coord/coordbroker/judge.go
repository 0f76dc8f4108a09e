package coordbroker

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/shardgate/shardgate/planparse"
)

// Action is what a judged change does to its coordinator group.
type Action string

// Judged actions. A Scale also lets the module's create call through at the
// judged count (it answers 409 GROUP_ALREADY_EXISTS on an existing group), and
// a Create the stream scale to that count (the module scales when routing
// differs).
const (
	Create Action = "create"
	Scale  Action = "scale"
	// Delete is judged only when the policy allowed the delete (a waived one).
	Delete Action = "delete"
)

// Change is one change of the judged change set, on one coordinator.
type Change struct {
	// Coordinator is the coordinator's base URL (the plan's
	// coordinator_base_url, normalized).
	Coordinator   string
	StreamPrefix  string
	ConsumerGroup string
	Action        Action
	// Shards is the judged desired count (unused for Delete).
	Shards int
}

// verdict is the broker's judgement of one request.
type verdict struct {
	allowed bool
	// mutation is set for calls that change the coordinator.
	mutation bool
	// summary names the call for the refusal message, e.g.
	// "POST /coord/v1/streams/payment-events/scale (targetShardCount 40)".
	summary string
	reason  string
	// body is the request body to forward for a passed mutation, built from
	// the judged change (never the caller's bytes).
	body []byte
}

// countField is the body field that carries the count of each mutation.
var countField = map[string]string{"create": "initialShardCount", "scale": "targetShardCount"}

// judge decides one request to coordinator up (path is the escaped path,
// query its raw query).
func (b *Broker) judge(up *upstream, method, path, query string, body []byte) verdict {
	v := verdict{summary: clip(method, 16) + " " + clip(path, maxPathShown)}
	if method == http.MethodGet || method == http.MethodHead {
		v.allowed = true
		return v
	}
	v.mutation = true
	changes, readOnly := b.judgement()
	if readOnly {
		v.reason = "a plan or drift check only reads the coordinator"
		return v
	}
	base, kind, prefix, group, ok := route(method, path)
	if !ok {
		v.reason = "the review judged no such call"
		return v
	}
	if query != "" {
		v.reason = "the review judged no call with a query"
		return v
	}
	m, err := readBody(kind, body)
	if err != nil {
		v.reason = err.Error()
		return v
	}
	if name := countField[kind]; name != "" {
		if m.count < 0 {
			v.summary += " (" + name + " missing)"
		} else {
			v.summary += fmt.Sprintf(" (%s %d)", name, m.count)
		}
	}
	for _, c := range changes {
		if coordinatorID(c.Coordinator) != coordinatorID(up.origin+base) || c.StreamPrefix != prefix {
			continue
		}
		switch kind {
		case "create":
			v.allowed = c.ConsumerGroup == group && c.Action != Delete && m.count >= 0 && m.count == c.Shards
		case "scale":
			v.allowed = c.Action != Delete && m.count >= 0 && m.count == c.Shards
		case "delete":
			v.allowed = c.ConsumerGroup == group && c.Action == Delete
		}
		if v.allowed {
			v.body = b.judgedBody(kind, c, m)
			return v
		}
	}
	v.reason = "the review judged no such call"
	return v
}

// maxPathShown bounds a path in a summary: the job's code chooses it, and it
// ends up in the check run, the comment and the audit record.
const maxPathShown = 200

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// route names the judged kinds of mutation: "create" (POST
// …/streams/{p}/groups/{g}), "scale" (POST …/streams/{p}/scale), "delete"
// (DELETE …/streams/{p}/groups/{g}). Escapes, dot segments and empty segments
// are never judged: the coordinator may read them differently.
//
// base is the path before /coord/v1: the coordinator's own base path.
func route(method, path string) (base, kind, prefix, group string, ok bool) {
	const api = "/coord/v1/streams/"
	i := strings.Index(path, api)
	if i < 0 || strings.ContainsAny(path, "%?#") {
		return "", "", "", "", false
	}
	base, rest := path[:i], path[i+len(api):]
	seg := strings.Split(rest, "/")
	for _, s := range append(strings.Split(base, "/")[1:], seg...) {
		if s == "" || s == "." || s == ".." {
			return "", "", "", "", false
		}
	}
	switch {
	case method == http.MethodPost && len(seg) == 3 && seg[1] == "groups":
		return base, "create", seg[0], seg[2], true
	case method == http.MethodPost && len(seg) == 2 && seg[1] == "scale":
		return base, "scale", seg[0], "", true
	case method == http.MethodDelete && len(seg) == 3 && seg[1] == "groups":
		return base, "delete", seg[0], seg[2], true
	}
	return "", "", "", "", false
}

// coordinatorID is a coordinator URL as an identity: normalized, without the
// API's /coord/v1 (the module appends it when the base URL lacks it).
func coordinatorID(raw string) string {
	return strings.TrimSuffix(planparse.NormalizeURL(raw), "/coord/v1")
}
