package coordsim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Audit actions (coordinator.md §3).
const (
	ActionCreateStream = "CREATE_STREAM"
	ActionCreateGroup  = "CREATE_GROUP"
	ActionDeleteGroup  = "DELETE_GROUP"
	ActionScaleStream  = "SCALE_STREAM"
	ActionScaleGroup   = "SCALE_GROUP"
	ActionRollback     = "ROLLBACK_MIGRATION"
)

// AuditEvent is one audited mutation, with the coordinator's field names and
// values (AuditLogInterceptor.kt). Every text field the coordinator leaves
// null (a blank principal, requestedBy or reason, no consumer group for a
// stream-level action, a reshardingId outside rollbacks, no body, no query)
// is "" here and null in JSON; the coordinator never writes "" for them.
type AuditEvent struct {
	Timestamp         time.Time `json:"timestamp"`
	CoordinatorID     string    `json:"coordinatorId"`
	Action            string    `json:"action"`
	Outcome           string    `json:"outcome"`
	Status            int       `json:"status"`
	Principal         string    `json:"principal"`
	Method            string    `json:"method"`
	Path              string    `json:"path"`
	StreamPrefix      string    `json:"streamPrefix"`
	ConsumerGroup     string    `json:"consumerGroup"`
	ReshardingID      string    `json:"reshardingId"`
	Route             string    `json:"route"`
	QueryString       string    `json:"queryString"`
	RequestID         string    `json:"requestId"`
	RequestedBy       string    `json:"requestedBy"`
	Reason            string    `json:"reason"`
	ClientAddress     string    `json:"clientAddress"`
	UserAgent         string    `json:"userAgent"`
	Roles             []string  `json:"roles"`
	DurationMs        int64     `json:"durationMs"`
	RequestBodySha256 string    `json:"requestBodySha256"`
	// RequestSummary holds initialShardCount, targetShardCount and force as
	// strings ("4", "false"), as Jackson's asString gives them.
	RequestSummary map[string]string `json:"requestSummary"`
}

// auditJSON is AuditEvent's wire form: the nullable fields as pointers.
type auditJSON struct {
	Timestamp         time.Time         `json:"timestamp"`
	CoordinatorID     string            `json:"coordinatorId"`
	Action            string            `json:"action"`
	Outcome           string            `json:"outcome"`
	Status            int               `json:"status"`
	Principal         *string           `json:"principal"`
	Method            string            `json:"method"`
	Path              string            `json:"path"`
	StreamPrefix      *string           `json:"streamPrefix"`
	ConsumerGroup     *string           `json:"consumerGroup"`
	ReshardingID      *string           `json:"reshardingId"`
	Route             *string           `json:"route"`
	QueryString       *string           `json:"queryString"`
	RequestID         *string           `json:"requestId"`
	RequestedBy       *string           `json:"requestedBy"`
	Reason            *string           `json:"reason"`
	ClientAddress     *string           `json:"clientAddress"`
	UserAgent         *string           `json:"userAgent"`
	Roles             []string          `json:"roles"`
	DurationMs        int64             `json:"durationMs"`
	RequestBodySha256 *string           `json:"requestBodySha256"`
	RequestSummary    map[string]string `json:"requestSummary"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func fromNull(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// MarshalJSON writes "" text fields as null, as the coordinator does.
func (e AuditEvent) MarshalJSON() ([]byte, error) {
	roles, summary := e.Roles, e.RequestSummary
	if roles == nil {
		roles = []string{}
	}
	if summary == nil {
		summary = map[string]string{}
	}
	return json.Marshal(auditJSON{
		Timestamp: e.Timestamp, CoordinatorID: e.CoordinatorID, Action: e.Action, Outcome: e.Outcome, Status: e.Status,
		Principal: orNull(e.Principal), Method: e.Method, Path: e.Path, StreamPrefix: orNull(e.StreamPrefix),
		ConsumerGroup: orNull(e.ConsumerGroup), ReshardingID: orNull(e.ReshardingID), Route: orNull(e.Route),
		QueryString: orNull(e.QueryString), RequestID: orNull(e.RequestID), RequestedBy: orNull(e.RequestedBy),
		Reason: orNull(e.Reason), ClientAddress: orNull(e.ClientAddress), UserAgent: orNull(e.UserAgent),
		Roles: roles, DurationMs: e.DurationMs, RequestBodySha256: orNull(e.RequestBodySha256), RequestSummary: summary,
	})
}

// UnmarshalJSON reads null text fields as "".
func (e *AuditEvent) UnmarshalJSON(b []byte) error {
	var a auditJSON
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	*e = AuditEvent{
		Timestamp: a.Timestamp, CoordinatorID: a.CoordinatorID, Action: a.Action, Outcome: a.Outcome, Status: a.Status,
		Principal: fromNull(a.Principal), Method: a.Method, Path: a.Path, StreamPrefix: fromNull(a.StreamPrefix),
		ConsumerGroup: fromNull(a.ConsumerGroup), ReshardingID: fromNull(a.ReshardingID), Route: fromNull(a.Route),
		QueryString: fromNull(a.QueryString), RequestID: fromNull(a.RequestID), RequestedBy: fromNull(a.RequestedBy),
		Reason: fromNull(a.Reason), ClientAddress: fromNull(a.ClientAddress), UserAgent: fromNull(a.UserAgent),
		Roles: a.Roles, DurationMs: a.DurationMs, RequestBodySha256: fromNull(a.RequestBodySha256), RequestSummary: a.RequestSummary,
	}
	return nil
}

// actions maps a mutation's route pattern to its audit action.
var actions = map[string]string{
	"POST /coord/v1/streams/{streamPrefix}":                                                           ActionCreateStream,
	"POST /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}":                                    ActionCreateGroup,
	"DELETE /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}":                                  ActionDeleteGroup,
	"POST /coord/v1/streams/{streamPrefix}/scale":                                                     ActionScaleStream,
	"POST /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/scale":                              ActionScaleGroup,
	"POST /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/migrations/{reshardingId}/rollback": ActionRollback,
}

// outcomeOf follows the interceptor: 401 and 403 by the auth interceptor, any
// other status below 400 SUCCESS, the rest FAILED, a 5xx the service answered
// itself (503 provisioning, terminating) included. ERROR is for an exception no
// handler resolved, which the simulator never raises.
func outcomeOf(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "UNAUTHORIZED"
	case status == http.StatusForbidden:
		return "FORBIDDEN"
	case status >= 200 && status < 400:
		return "SUCCESS"
	}
	return "FAILED"
}

// requestID follows the coordinator's header fallbacks.
func requestID(r *http.Request) string {
	for _, h := range []string{"X-Request-Id", "X-Correlation-Id", "X-Amzn-Trace-Id"} {
		if v := r.Header.Get(h); v != "" {
			return v
		}
	}
	return ""
}

func clientAddress(r *http.Request) string {
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		first, _, _ := strings.Cut(xff, ",")
		return strings.TrimSpace(first)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// auditBody reads requestedBy, reason and the summary keys the way
// parseAuditBody does: scalars as text, blank text as null. A body that is not
// a JSON object gives nothing.
func auditBody(body []byte) (requestedBy, reason string, summary map[string]string) {
	summary = map[string]string{}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return "", "", summary
	}
	text := func(k string) (string, bool) {
		raw, ok := fields[k]
		if !ok {
			return "", false
		}
		var str string
		if json.Unmarshal(raw, &str) == nil {
			return str, true
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return "", false
		}
		switch v.(type) {
		case float64, bool:
			return string(raw), true // the JSON literal: 4, 4.5, true
		}
		return "", false
	}
	for _, k := range []string{"initialShardCount", "targetShardCount", "force"} {
		if v, ok := text(k); ok {
			summary[k] = v
		}
	}
	requestedBy, _ = text("requestedBy")
	reason, _ = text("reason")
	if strings.TrimSpace(requestedBy) == "" {
		requestedBy = ""
	}
	if strings.TrimSpace(reason) == "" {
		reason = ""
	}
	return requestedBy, reason, summary
}

// buildAudit makes the event. body is nil when the request was refused before
// a handler read it.
func (s *Sim) buildAudit(r *http.Request, body []byte, p principal, authed bool, status int, start time.Time) AuditEvent {
	requestedBy, reason, summary := auditBody(body)
	ev := AuditEvent{
		Timestamp:      s.clock.Now(),
		CoordinatorID:  s.coordinatorID,
		Action:         actions[r.Pattern],
		Outcome:        outcomeOf(status),
		Status:         status,
		Method:         r.Method,
		Path:           r.URL.Path,
		StreamPrefix:   r.PathValue("streamPrefix"),
		ConsumerGroup:  r.PathValue("consumerGroup"),
		ReshardingID:   r.PathValue("reshardingId"),
		Route:          strings.TrimPrefix(r.Pattern, r.Method+" "),
		QueryString:    r.URL.RawQuery,
		RequestID:      requestID(r),
		RequestedBy:    requestedBy,
		Reason:         reason,
		ClientAddress:  clientAddress(r),
		UserAgent:      r.UserAgent(),
		Roles:          []string{},
		DurationMs:     time.Since(start).Milliseconds(),
		RequestSummary: summary,
	}
	if authed {
		ev.Principal = strings.TrimSpace(p.name)
		ev.Roles = p.roleNames()
		sort.Strings(ev.Roles)
	}
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		ev.RequestBodySha256 = hex.EncodeToString(sum[:])
	}
	return ev
}

// record stores and writes one event; s.mu must be held.
func (s *Sim) record(ev AuditEvent) {
	s.audit = append(s.audit, ev)
	if s.auditW == nil {
		return
	}
	if b, err := json.Marshal(ev); err == nil {
		_, _ = s.auditW.Write(append(b, '\n'))
	}
}
