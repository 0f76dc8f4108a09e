package serverconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The events a notification receiver may ask for (notifications[].events).
const (
	EventApplySucceeded = "apply_succeeded"
	EventApplyFailed    = "apply_failed"
	EventJobFailed      = "job_failed"
	EventDriftOpened    = "drift_opened"
	EventDriftClosed    = "drift_closed"
)

// NotificationEvents are every event, in the documented order: the events of
// a receiver that lists none.
var NotificationEvents = []string{EventApplySucceeded, EventApplyFailed, EventJobFailed, EventDriftOpened, EventDriftClosed}

// The formats of a notification's body (notifications[].format).
const (
	NotifyFormatJSON  = "json"
	NotifyFormatSlack = "slack"
)

// NotificationReceiver is one entry of notifications: where shardgate POSTs
// which events, signed with Secret.
type NotificationReceiver struct {
	URL    string
	Secret Secret
	Events []string
	Format string
	// InsecureHTTP (insecure_http) lets URL be http://: for a receiver on
	// loopback or in tests; the body and signature then cross the network
	// in the clear.
	InsecureHTTP bool
}

// Wants says whether the receiver asked for event.
func (r NotificationReceiver) Wants(event string) bool { return slices.Contains(r.Events, event) }

// Key names the receiver in the store, the same on every replica and across
// restarts and reorderings of the list: a digest of its URL, which may hold
// a token (Slack's incoming webhooks do) and is therefore never stored.
func (r NotificationReceiver) Key() string {
	sum := sha256.Sum256([]byte(r.URL))
	return hex.EncodeToString(sum[:8])
}

// Host is the receiver's host, the only part of its URL shardgate shows.
func (r NotificationReceiver) Host() string {
	u, err := url.Parse(r.URL)
	if err != nil {
		return ""
	}
	return u.Host
}

type rawNotification struct {
	URL          string   `yaml:"url"`
	SecretFile   string   `yaml:"secret_file"`
	Secret       Secret   `yaml:"secret"`
	Events       []string `yaml:"events"`
	Format       string   `yaml:"format"`
	InsecureHTTP bool     `yaml:"insecure_http"`
}

func (v *validator) notifications(raw []rawNotification) []NotificationReceiver {
	var out []NotificationReceiver
	seen := map[string]bool{}
	for i, r := range raw {
		field := fmt.Sprintf("notifications[%d]", i)
		n := NotificationReceiver{URL: r.URL, Format: r.Format, InsecureHTTP: r.InsecureHTTP}
		u, err := url.Parse(r.URL)
		switch {
		case r.URL == "":
			v.addf("%s.url is missing", field)
		case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
			v.addf("%s.url is not an https URL", field)
		case u.User != nil:
			v.addf("%s.url must not hold a user or password: the receiver authenticates shardgate by the signature", field)
		case u.Scheme == "http" && !r.InsecureHTTP:
			v.addf("%s.url is http: use https (or set insecure_http: true for a receiver on loopback or in a test)", field)
		case seen[r.URL]:
			v.addf("%s.url is listed twice: give each receiver one entry with all its events", field)
		}
		seen[r.URL] = true
		if r.SecretFile == "" {
			v.addf("%s.secret_file is missing: every notification is signed", field)
		} else {
			n.Secret = v.secretFile(field+".secret_file", r.SecretFile)
			v.minLength(field+".secret_file", n.Secret)
		}
		switch n.Format {
		case "":
			n.Format = NotifyFormatJSON
		case NotifyFormatJSON, NotifyFormatSlack:
		default:
			v.addf("%s.format %q is not json or slack", field, r.Format)
		}
		n.Events = v.notificationEvents(field, r.Events)
		out = append(out, n)
	}
	return out
}

func (v *validator) notificationEvents(field string, events []string) []string {
	if len(events) == 0 {
		return slices.Clone(NotificationEvents)
	}
	var out []string
	for _, e := range events {
		switch {
		case !slices.Contains(NotificationEvents, e):
			v.addf("%s.events: %q is not an event (want one of %s)", field, e, strings.Join(NotificationEvents, ", "))
		case slices.Contains(out, e):
			v.addf("%s.events: %q is listed twice", field, e)
		default:
			out = append(out, e)
		}
	}
	return out
}
