package coordsim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
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

// AuditEvent is one audited mutation, with the coordinator's field names.
type AuditEvent struct {
	Timestamp         time.Time      `json:"timestamp"`
	CoordinatorID     string         `json:"coordinatorId"`
	Action            string         `json:"action"`
	Outcome           string         `json:"outcome"`
	Status            int            `json:"status"`
	Principal         string         `json:"principal"`
	Method            string         `json:"method"`
	Path              string         `json:"path"`
	StreamPrefix      string         `json:"streamPrefix"`
	ConsumerGroup     string         `json:"consumerGroup"`
	ReshardingID      string         `json:"reshardingId"`
	Route             string         `json:"route"`
	QueryString       string         `json:"queryString"`
	RequestID         string         `json:"requestId"`
	RequestedBy       string         `json:"requestedBy"`
	Reason            string         `json:"reason"`
	ClientAddress     string         `json:"clientAddress"`
	UserAgent         string         `json:"userAgent"`
	Roles             []string       `json:"roles"`
	DurationMs        int64          `json:"durationMs"`
	RequestBodySha256 string         `json:"requestBodySha256"`
	RequestSummary    map[string]any `json:"requestSummary"`
}

// actions maps a mutation's route pattern to its audit action.
var actions = map[string]string{
	"POST /coord/v1/streams/{p}":                                     ActionCreateStream,
	"POST /coord/v1/streams/{p}/groups/{g}":                          ActionCreateGroup,
	"DELETE /coord/v1/streams/{p}/groups/{g}":                        ActionDeleteGroup,
	"POST /coord/v1/streams/{p}/scale":                               ActionScaleStream,
	"POST /coord/v1/streams/{p}/groups/{g}/scale":                    ActionScaleGroup,
	"POST /coord/v1/streams/{p}/groups/{g}/migrations/{id}/rollback": ActionRollback,
}

// auditNote is filled by a handler with what only it knows.
type auditNote struct{ reshardingIDs []string }

func outcomeOf(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "UNAUTHORIZED"
	case status == http.StatusForbidden:
		return "FORBIDDEN"
	case status < 400:
		return "SUCCESS"
	case status < 500:
		return "FAILED"
	}
	return "ERROR"
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

// buildAudit makes the event; the body is read from JSON generically so that
// refused (401/403/400) requests still show who asked and why.
func (s *Sim) buildAudit(r *http.Request, route string, body []byte, p principal, status int, start time.Time, note *auditNote) AuditEvent {
	var fields map[string]any
	_ = json.Unmarshal(body, &fields)
	str := func(k string) string { v, _ := fields[k].(string); return v }
	summary := map[string]any{}
	for _, k := range []string{"initialShardCount", "targetShardCount", "force"} {
		if v, ok := fields[k]; ok {
			summary[k] = v
		}
	}
	sum := sha256.Sum256(body)
	ev := AuditEvent{
		Timestamp:         s.clock.Now(),
		CoordinatorID:     s.coordinatorID,
		Action:            actions[route],
		Outcome:           outcomeOf(status),
		Status:            status,
		Principal:         p.name,
		Method:            r.Method,
		Path:              r.URL.Path,
		StreamPrefix:      r.PathValue("p"),
		ConsumerGroup:     r.PathValue("g"),
		ReshardingID:      r.PathValue("id"),
		Route:             strings.TrimPrefix(route, r.Method+" "),
		QueryString:       r.URL.RawQuery,
		RequestID:         requestID(r),
		RequestedBy:       str("requestedBy"),
		Reason:            str("reason"),
		ClientAddress:     clientAddress(r),
		UserAgent:         r.UserAgent(),
		Roles:             p.roleNames(),
		DurationMs:        time.Since(start).Milliseconds(),
		RequestBodySha256: hex.EncodeToString(sum[:]),
		RequestSummary:    summary,
	}
	if ev.ReshardingID == "" && note != nil {
		ev.ReshardingID = strings.Join(note.reshardingIDs, ",")
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
