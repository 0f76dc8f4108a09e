// Package api is the automation API under /api/v1/ on the status listener:
// a pull request's verdict per project, the webhook jobs by state, retrying
// a failed job and cancelling a waiting one, and the apply records. Callers
// carry a bearer token of api.tokens_file; a read token reads, a write token
// also retries and cancels. Every answer is JSON, errors too
// ({"error": "..."}), and every answer matches docs/api.openapi.yaml (the
// tests check it). Every call is logged with the token's name, never the
// token.
package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
)

// Prefix is where the API is served on the status listener.
const Prefix = "/api/v1/"

// Subject is what a job is about, read from its payload by the server.
type Subject struct {
	Repository  string
	PullRequest int
	Project     string
	// Applies: running the job applies a change (a merged pull request, an
	// `/shardgate apply` command): it is never cancelled.
	Applies bool
}

// Jobs is the store as the API uses it: jobs by id and by state, and the
// operator's changes to them.
type Jobs interface {
	GetJob(ctx context.Context, id string) (*store.Job, error)
	store.JobAdmin
}

// Audits lists the apply records (records.BucketAudit).
type Audits interface {
	List(ctx context.Context, bucket, prefix string) ([]store.KV, error)
}

// Options are the API's services.
type Options struct {
	Tokens  []serverconfig.APIToken
	Jobs    Jobs
	Records records.Store
	Audits  Audits
	// Describe says what a job is about; nil describes nothing.
	Describe func(*store.Job) Subject
	// Canceller cancels running jobs; nil refuses them (RefuseRunning).
	Canceller JobCanceller
	Log       *logrus.Entry
}

// Handler serves the API.
type Handler struct {
	o      Options
	tokens tokens
	mux    *http.ServeMux
}

// New returns the API's handler; mount it at Prefix.
func New(o Options) *Handler {
	if o.Describe == nil {
		o.Describe = func(*store.Job) Subject { return Subject{} }
	}
	if o.Canceller == nil {
		o.Canceller = RefuseRunning{}
	}
	if o.Log == nil {
		o.Log = logrus.NewEntry(logrus.StandardLogger())
	}
	h := &Handler{o: o, tokens: newTokens(o.Tokens), mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /api/v1/repos/{owner}/{repo}/pulls/{number}", h.read(h.pull))
	h.mux.HandleFunc("GET /api/v1/jobs", h.read(h.jobs))
	h.mux.HandleFunc("POST /api/v1/jobs/{id}/retry", h.write(h.retry))
	h.mux.HandleFunc("POST /api/v1/jobs/{id}/cancel", h.write(h.cancel))
	h.mux.HandleFunc("GET /api/v1/applies", h.read(h.applies))
	h.mux.HandleFunc(Prefix, notFound)
	return h
}

// ServeHTTP authenticates every request before routing it, so that nothing
// (not even which paths exist) is told to a caller without a token.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	tok, ok := h.tokens.find(r.Header.Get("Authorization"))
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="shardgate-api"`)
		h.o.Log.WithFields(logrus.Fields{"method": r.Method, "path": r.URL.Path, "remote": r.RemoteAddr}).
			Warn("api: refused a request without a valid token")
		writeError(w, http.StatusUnauthorized, "a valid API token is required: Authorization: Bearer <token> (api.tokens_file)")
		return
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	h.mux.ServeHTTP(rec, r.WithContext(withToken(r.Context(), tok)))
	h.o.Log.WithFields(logrus.Fields{"api_token": tok.Name, "scope": tok.Scope, "method": r.Method,
		"path": r.URL.Path, "status": rec.status}).Info("api: request")
}

// handlerFunc answers one endpoint: a status and a value to write as JSON,
// or an error (apiError for a status of its own, else 500).
type handlerFunc func(w http.ResponseWriter, r *http.Request) (int, any, error)

func (h *Handler) read(f handlerFunc) http.HandlerFunc { return h.serve(f, false) }

func (h *Handler) write(f handlerFunc) http.HandlerFunc { return h.serve(f, true) }

func (h *Handler) serve(f handlerFunc, writes bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok := tokenOf(r.Context())
		if writes && tok.Scope != serverconfig.APIScopeWrite {
			writeError(w, http.StatusForbidden, "the token "+tok.Name+" is read-only: this endpoint needs a write token")
			return
		}
		status, v, err := f(w, r)
		if err != nil {
			if ae, ok := err.(*apiError); ok {
				writeError(w, ae.status, ae.msg)
				return
			}
			h.o.Log.WithError(err).WithField("api_token", tok.Name).Error("api: request failed")
			writeError(w, http.StatusInternalServerError, "internal error: see the server's log")
			return
		}
		writeJSON(w, status, v)
	}
}

// apiError is an answer of its own status with a reason.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func fail(status int, msg string) error { return &apiError{status: status, msg: msg} }

// errorBody is every error's answer.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

// statusRecorder keeps the status written, for the audit line.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// notFound answers a path under Prefix that names no endpoint (the mux's
// own 404 is text): JSON, after authentication like every other answer.
func notFound(w http.ResponseWriter, r *http.Request) {
	msg := "no such endpoint: " + r.Method + " " + r.URL.Path
	if strings.ContainsAny(msg, "\r\n") {
		msg = "no such endpoint"
	}
	writeError(w, http.StatusNotFound, msg)
}
