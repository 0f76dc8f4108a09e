// Package statuspage serves shardgate's status page: per stream, the apply
// queue in order and who waits behind whom and why, the stream locks and
// leases held, the state locks running jobs wait on, the recent plans and
// applies, drift per project, and a running job's terraform output live
// (server-sent events). It is server-rendered html/template, read from
// narrow interfaces over the apply queue, the records and the live logs,
// and works with either store. Every name it shows came from a plan or a
// pull request and is escaped by the templates; every text is redacted
// with the server's secrets before it is rendered. It is guarded by a
// bearer token, by sign-in with GitHub for approvers (signin.go), or both.
package statuspage

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/server/livelog"
	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// Queue is what the page reads of the apply queue (applyqueue.Queue).
type Queue interface {
	// Live returns the unfinished jobs in merge order.
	Live(ctx context.Context) ([]*applyqueue.Job, error)
	// LastSeq is the newest job's Seq ("" before the first).
	LastSeq(ctx context.Context) (string, error)
}

// History is what the page reads of the records (records.Store).
type History interface {
	RecentPlans(ctx context.Context, n int) ([]records.RecentPlan, error)
	RecentAudits(ctx context.Context, lastSeq string, n int) ([]records.Audit, error)
}

// DriftSource tells the drift of every project checked (the drift checks).
type DriftSource interface {
	Drift(ctx context.Context) ([]DriftRow, error)
}

// DriftRow is one project's drift as last checked.
type DriftRow struct {
	Repo    string // owner/name
	Project string
	// Status is the check's outcome, e.g. "in sync", "drifted", "error: …".
	Status string
	Groups []DriftGroup
	// Since is when the drift was first seen; zero when in sync.
	Since     time.Time
	CheckedAt time.Time
	// IssueURL is the issue that tracks the drift; linked only when it is on
	// the configured GitHub.
	IssueURL string
}

// DriftGroup is one consumer group whose live shard count is not the
// desired one.
type DriftGroup struct {
	Prefix, Group string
	Desired       int
	// Live is nil when the coordinator has no such group.
	Live *int
}

// Recent bounds what the overview lists.
const (
	DefaultRecentPlans   = 20
	DefaultRecentApplies = 20
)

// Options are what the page is built from. Queue, History and Logs are
// required; Drift may be nil (drift checks off).
type Options struct {
	Queue   Queue
	History History
	Drift   DriftSource
	// Failures are the failing jobs and the services' reachability; nil
	// leaves those sections out.
	Failures Failures
	// Notifications are the pending and failed notification deliveries;
	// nil (no receivers configured) leaves the section out.
	Notifications Notifications
	// GitHub reads the installations' rate-limit budgets; may be nil.
	GitHub func() []GitHubBudget
	Logs   *livelog.Hub
	// Redactor removes the server's secrets from every text shown.
	Redactor *redact.Redactor
	// Token, when not empty, is the bearer token every request must carry
	// (unless it has a session of SignIn).
	Token string
	// SignIn, when set, lets approvers sign in with GitHub (signin.go); the
	// page then needs a session or the token.
	SignIn *SignIn
	// GitHubURL is GitHub's web address (https://github.com, or a GitHub
	// Enterprise host): pull request, commit and issue links are built on it.
	GitHubURL string
	// Replica names this process (the apply queue's lease owner): live logs
	// are kept by the replica running the job.
	Replica string
	// Enforcement says what the server enforces on terraform's network and
	// the coordinators, and what it does not (shown as given).
	Enforcement []string
	Now         func() time.Time
	Log         *logrus.Entry
	// Settings are facts of this server's configuration worth seeing beside
	// its queues (how jobs' processes are ended, how many applies may run at
	// once), listed in order under "This server".
	Settings []Setting
}

// Setting is one fact of the server's configuration: a name (a config key
// or a short label) and what it is.
type Setting struct {
	Name, Value string
	// Warn marks a setting that leaves something unenforced.
	Warn bool
}

// Handler serves the status page.
type Handler struct {
	o    Options
	want [sha256.Size]byte
	mux  *http.ServeMux
	key  []byte // signs the sign-in's cookies (session.go)
}

// New returns the page's handler.
func New(o Options) *Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = logrus.NewEntry(logrus.StandardLogger())
	}
	o.GitHubURL = strings.TrimRight(o.GitHubURL, "/")
	pages() // parsed with the server, not at its first page
	signInPage()
	h := &Handler{o: o, want: sha256.Sum256([]byte(o.Token)), mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /{$}", h.serveOverview)
	h.mux.HandleFunc("GET /jobs/{id}", h.serveJob)
	h.mux.HandleFunc("GET /jobs/{id}/log", h.serveLog)
	h.routeSignIn()
	return h
}

// ServeHTTP checks the token, sets the headers every answer carries and
// serves the page.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	if h.o.SignIn != nil {
		h.serveSignedIn(w, r)
		return
	}
	if !h.authorized(r) {
		h.o.Log.WithField("remote", r.RemoteAddr).Warn("status page refused: missing or wrong bearer token")
		hd.Add("WWW-Authenticate", `Bearer realm="shardgate status"`)
		hd.Add("WWW-Authenticate", `Basic realm="shardgate status"`)
		http.Error(w, "a valid bearer token is required (status.token_file)", http.StatusUnauthorized)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// authorized accepts "Authorization: Bearer <token>", or Basic with the
// token as the password (what a browser's own prompt sends, EventSource
// included). Hashes of equal length are compared in constant time.
func (h *Handler) authorized(r *http.Request) bool {
	if h.o.Token == "" {
		return true
	}
	auth := r.Header.Get("Authorization")
	given, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		enc, basic := strings.CutPrefix(auth, "Basic ")
		raw, err := base64.StdEncoding.DecodeString(enc)
		if !basic || err != nil {
			return false
		}
		_, given, ok = strings.Cut(string(raw), ":")
		if !ok {
			return false
		}
	}
	got := sha256.Sum256([]byte(given))
	return subtle.ConstantTimeCompare(got[:], h.want[:]) == 1
}

// WebURL is GitHub's web address for its API address: https://github.com for
// https://api.github.com/, https://ghe.example.com for a GitHub Enterprise
// Server's https://ghe.example.com/api/v3/. "" when apiURL is not an http(s)
// URL.
func WebURL(apiURL string) string { return notify.WebURL(apiURL) }
