package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
)

// Intake is the webhook endpoint: it verifies, de-duplicates and persists each
// delivery, then answers at once; the work runs later from the queue. Bodies
// are hashed as they stream in, within the bounds of a bodyGate, so strangers
// cannot make it hold more than a bounded amount of memory.
type Intake struct {
	secret    []byte
	store     store.Store
	maxQueued int
	maxBytes  int64
	gate      *bodyGate
	handled   map[string]bool
	log       *logrus.Entry
	// notify wakes the dispatcher after an enqueue; it never blocks.
	notify func()
	// Observe counts deliveries by event and outcome (metrics); may be nil.
	Observe func(event, outcome string)
	// Identify gives each delivery its scheduling identity (fair claims,
	// coalescing); nil: none.
	Identify Identifier
	// Now is the intake's clock, which paces the log of refusals; nil: the
	// wall clock.
	Now      func() time.Time
	refusals refusalLog
}

func (in *Intake) now() time.Time {
	if in.Now != nil {
		return in.Now()
	}
	return time.Now()
}

// refused logs a refusal of a request not (yet) known to be GitHub's, at
// most RefusalsLogged a minute.
func (in *Intake) refused(log *logrus.Entry, msg string) {
	in.refusals.warn(in.now(), log, msg)
}

// MaxDeliveryBytes bounds a delivery's body (GitHub sends at most 25 MiB).
const MaxDeliveryBytes = 25 << 20

// Secret is the webhook secret as the intake takes it: a credential that
// reveals its value only when asked (serverconfig.Secret, which never
// prints).
type Secret interface{ Reveal() string }

// NewIntake returns the webhook handler. events lists the X-GitHub-Event values
// that have a handler; others are acknowledged and ignored.
func NewIntake(secret Secret, st store.Store, events []string, maxQueued int, log *logrus.Entry, notify func()) (*Intake, error) {
	if secret == nil || secret.Reveal() == "" {
		return nil, errors.New("new intake: no webhook secret: shardgate refuses unsigned webhooks")
	}
	in := &Intake{secret: []byte(secret.Reveal()), store: st, maxQueued: maxQueued, maxBytes: MaxDeliveryBytes,
		gate: newBodyGate(), handled: map[string]bool{}, log: log, notify: notify}
	for _, e := range events {
		in.handled[e] = true
	}
	if in.notify == nil {
		in.notify = func() {}
	}
	return in, nil
}

// Reply is the JSON body of every answer of the intake: Status is queued,
// duplicate, ignored, pong or rejected; JobID names the queued job; Reason
// says why a delivery was ignored or rejected.
type Reply struct {
	Status string `json:"status"`
	JobID  string `json:"job_id,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (in *Intake) reply(w http.ResponseWriter, event string, code int, r Reply) {
	if in.Observe != nil {
		in.Observe(event, r.Status)
	}
	reply(w, code, r)
}

func reply(w http.ResponseWriter, code int, r Reply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(r)
}

// ServeHTTP handles POST /webhook.
func (in *Intake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		in.reply(w, "", http.StatusMethodNotAllowed, Reply{Status: "rejected", Reason: "webhooks are POSTed"})
		return
	}
	event := r.Header.Get("X-GitHub-Event")
	delivery := r.Header.Get("X-GitHub-Delivery")
	log := in.log.WithFields(logrus.Fields{logctx.FieldEvent: clip(event), logctx.FieldDelivery: clip(delivery)})
	// Only a delivery that may be queued needs its body kept; the others are
	// hashed as they stream by.
	keep := in.handled[event] && delivery != ""
	body, ok := in.authenticate(w, r, keep, log)
	if !ok {
		return
	}
	switch {
	case event == "":
		in.reply(w, event, http.StatusBadRequest, Reply{Status: "rejected", Reason: "X-GitHub-Event is missing"})
	case event == "ping":
		in.reply(w, event, http.StatusOK, Reply{Status: "pong"})
	case !in.handled[event]:
		in.reply(w, event, http.StatusAccepted, Reply{Status: "ignored", Reason: "shardgate does not handle " + clip(event) + " events"})
	case delivery == "":
		in.reply(w, event, http.StatusBadRequest, Reply{Status: "rejected", Reason: "X-GitHub-Delivery is missing"})
	case !json.Valid(body):
		in.reply(w, event, http.StatusBadRequest, Reply{Status: "rejected", Reason: "body is not JSON"})
	default:
		in.enqueue(w, r, event, delivery, body, log)
	}
}

// authenticate reads the body through the HMAC and answers (false) unless the
// signature matches. What can be refused from the headers is refused before a
// byte of the body is read; the rest is read under the body gate's bounds, and
// a kept body is copied out of the gate's chunks only once it is verified.
func (in *Intake) authenticate(w http.ResponseWriter, r *http.Request, keep bool, log *logrus.Entry) ([]byte, bool) {
	// Refused before the end of its body, a request closes its connection:
	// net/http would otherwise read on to discard the rest, for a stranger.
	unread := func() { w.Header().Set("Connection", "close") }
	if r.ContentLength > in.maxBytes {
		unread()
		in.refused(log, "webhook body over the size limit")
		in.reply(w, "", http.StatusRequestEntityTooLarge, Reply{Status: "rejected", Reason: "body is larger than 25 MiB"})
		return nil, false
	}
	want, ok := parseSignature(r.Header.Get("X-Hub-Signature-256"))
	if !ok {
		unread()
		in.refused(log, "webhook signature missing or wrong")
		in.reply(w, "", http.StatusUnauthorized, Reply{Status: "rejected", Reason: "X-Hub-Signature-256 is missing or does not match"})
		return nil, false
	}
	leave, ok := in.gate.enter()
	if !ok {
		unread()
		in.refused(log, "too many webhook bodies in flight: delivery refused")
		w.Header().Set("Retry-After", "10")
		in.reply(w, "", http.StatusServiceUnavailable, Reply{Status: "rejected", Reason: "too many webhook bodies are being received; redeliver later"})
		return nil, false
	}
	defer leave()
	mac := hmac.New(sha256.New, in.secret)
	held, err := in.gate.read(w, r.Body, mac, in.maxBytes, keep)
	defer held.release()
	if err != nil {
		unread()
		in.refuseBody(w, err, log)
		return nil, false
	}
	if !hmac.Equal(want, mac.Sum(nil)) {
		in.refused(log, "webhook signature missing or wrong")
		in.reply(w, "", http.StatusUnauthorized, Reply{Status: "rejected", Reason: "X-Hub-Signature-256 is missing or does not match"})
		return nil, false
	}
	if !keep {
		return nil, true
	}
	return held.bytes(), true
}

// refuseBody answers a body the gate stopped reading.
func (in *Intake) refuseBody(w http.ResponseWriter, err error, log *logrus.Entry) {
	switch {
	case errors.Is(err, errBodyTooLarge):
		in.refused(log, "webhook body over the size limit")
		in.reply(w, "", http.StatusRequestEntityTooLarge, Reply{Status: "rejected", Reason: "body is larger than 25 MiB"})
	case errors.Is(err, errBudgetSpent):
		in.refused(log, "memory for unverified webhook bodies spent: delivery refused")
		w.Header().Set("Retry-After", "10")
		in.reply(w, "", http.StatusServiceUnavailable, Reply{Status: "rejected", Reason: "too many large webhook bodies are being received; redeliver later"})
	case errors.Is(err, os.ErrDeadlineExceeded):
		in.refused(log, "webhook body arrived too slowly")
		in.reply(w, "", http.StatusRequestTimeout, Reply{Status: "rejected", Reason: "the body arrived too slowly"})
	default:
		in.reply(w, "", http.StatusBadRequest, Reply{Status: "rejected", Reason: "could not read the body"})
	}
}

// enqueue persists a verified delivery and answers 202, or 503 when it cannot.
func (in *Intake) enqueue(w http.ResponseWriter, r *http.Request, event, delivery string, body []byte, log *logrus.Entry) {
	job := &store.Job{DeliveryID: delivery, Kind: JobKindEvent, Event: event, Payload: body}
	if in.Identify != nil {
		id := in.Identify(event, body)
		job.Installation, job.Lane, job.CoalesceKey, job.Priority = id.Installation, id.Lane, id.CoalesceKey, id.Priority
	}
	err := in.store.Enqueue(r.Context(), job, in.maxQueued)
	switch {
	case errors.Is(err, store.ErrDuplicate):
		log.Info("redelivery of a queued delivery acknowledged; not run twice")
		in.reply(w, event, http.StatusAccepted, Reply{Status: "duplicate", Reason: "this delivery was already received"})
	case errors.Is(err, store.ErrQueueFull):
		log.Warn("queue full: delivery refused")
		w.Header().Set("Retry-After", "60")
		in.reply(w, event, http.StatusServiceUnavailable, Reply{Status: "rejected", Reason: "queue is full; redeliver later"})
	case err != nil:
		log.WithError(err).Error("could not persist a delivery")
		in.reply(w, event, http.StatusServiceUnavailable, Reply{Status: "rejected", Reason: "could not persist the delivery; redeliver later"})
	default:
		log.WithField(logctx.FieldJob, job.ID).Info("delivery queued")
		in.notify()
		in.reply(w, event, http.StatusAccepted, Reply{Status: "queued", JobID: job.ID})
	}
}

// parseSignature decodes GitHub's "sha256=<64 hex>" header; the comparison
// with the body's HMAC is constant-time (hmac.Equal) in authenticate.
func parseSignature(header string) ([]byte, bool) {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return nil, false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return nil, false
	}
	return got, true
}
