package bot

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/store"
)

// JobKindEvent is the store.Job kind of a webhook delivery.
const JobKindEvent = "event"

// Intake is the webhook endpoint: it verifies, de-duplicates and persists each
// delivery, then answers at once; the work runs later from the queue.
type Intake struct {
	secret    []byte
	store     store.Store
	maxQueued int
	maxBytes  int64
	handled   map[string]bool
	log       *logrus.Entry
	// notify wakes the dispatcher after an enqueue; it never blocks.
	notify func()
	// observe counts deliveries by event and outcome (metrics); may be nil.
	observe func(event, outcome string)
}

// NewIntake returns the webhook handler. events lists the X-GitHub-Event values
// that have a handler; others are acknowledged and ignored.
func NewIntake(secret Secret, st store.Store, events []string, maxQueued int, log *logrus.Entry, notify func()) (*Intake, error) {
	if secret.Empty() {
		return nil, errors.New("new intake: no webhook secret: shardgate refuses unsigned webhooks")
	}
	in := &Intake{secret: []byte(secret.Reveal()), store: st, maxQueued: maxQueued, maxBytes: DefaultMaxWebhookBytes,
		handled: map[string]bool{}, log: log, notify: notify}
	for _, e := range events {
		in.handled[e] = true
	}
	if in.notify == nil {
		in.notify = func() {}
	}
	return in, nil
}

type intakeReply struct {
	Status string `json:"status"`
	JobID  string `json:"job_id,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (in *Intake) reply(w http.ResponseWriter, event string, code int, r intakeReply) {
	if in.observe != nil {
		in.observe(event, r.Status)
	}
	reply(w, code, r)
}

func reply(w http.ResponseWriter, code int, r intakeReply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(r)
}

// ServeHTTP handles POST /webhook.
func (in *Intake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		in.reply(w, "", http.StatusMethodNotAllowed, intakeReply{Status: "rejected", Reason: "webhooks are POSTed"})
		return
	}
	event := r.Header.Get("X-GitHub-Event")
	delivery := r.Header.Get("X-GitHub-Delivery")
	log := in.log.WithFields(logrus.Fields{FieldEvent: event, FieldDelivery: delivery})

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, in.maxBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			log.Warn("webhook body over the size limit")
			in.reply(w, "", http.StatusRequestEntityTooLarge, intakeReply{Status: "rejected", Reason: "body is larger than 25 MiB"})
			return
		}
		in.reply(w, "", http.StatusBadRequest, intakeReply{Status: "rejected", Reason: "could not read the body"})
		return
	}
	if !in.validSignature(r.Header.Get("X-Hub-Signature-256"), body) {
		log.Warn("webhook signature missing or wrong")
		in.reply(w, "", http.StatusUnauthorized, intakeReply{Status: "rejected", Reason: "X-Hub-Signature-256 is missing or does not match"})
		return
	}
	switch {
	case event == "":
		in.reply(w, event, http.StatusBadRequest, intakeReply{Status: "rejected", Reason: "X-GitHub-Event is missing"})
		return
	case event == "ping":
		in.reply(w, event, http.StatusOK, intakeReply{Status: "pong"})
		return
	case !in.handled[event]:
		in.reply(w, event, http.StatusAccepted, intakeReply{Status: "ignored", Reason: "shardgate does not handle " + event + " events"})
		return
	case delivery == "":
		in.reply(w, event, http.StatusBadRequest, intakeReply{Status: "rejected", Reason: "X-GitHub-Delivery is missing"})
		return
	case !json.Valid(body):
		in.reply(w, event, http.StatusBadRequest, intakeReply{Status: "rejected", Reason: "body is not JSON"})
		return
	}
	job := &store.Job{DeliveryID: delivery, Kind: JobKindEvent, Event: event, Payload: body}
	err = in.store.Enqueue(r.Context(), job, in.maxQueued)
	switch {
	case errors.Is(err, store.ErrDuplicate):
		log.Info("redelivery of a queued delivery acknowledged; not run twice")
		in.reply(w, event, http.StatusAccepted, intakeReply{Status: "duplicate", Reason: "this delivery was already received"})
	case errors.Is(err, store.ErrQueueFull):
		log.Warn("queue full: delivery refused")
		w.Header().Set("Retry-After", "60")
		in.reply(w, event, http.StatusServiceUnavailable, intakeReply{Status: "rejected", Reason: "queue is full; redeliver later"})
	case err != nil:
		log.WithError(err).Error("could not persist a delivery")
		in.reply(w, event, http.StatusServiceUnavailable, intakeReply{Status: "rejected", Reason: "could not persist the delivery; redeliver later"})
	default:
		log.WithField(FieldJob, job.ID).Info("delivery queued")
		in.notify()
		in.reply(w, event, http.StatusAccepted, intakeReply{Status: "queued", JobID: job.ID})
	}
}

// validSignature checks GitHub's HMAC-SHA256 of the body in constant time.
func (in *Intake) validSignature(header string, body []byte) bool {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, in.secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}
