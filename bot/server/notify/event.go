// Package notify sends shardgate's events (an apply succeeded or failed, a
// job failed for good, a drift issue opened or closed) to the receivers of
// the server configuration's notifications list: signed webhooks, kept in
// the store's outbox until each receiver accepted them, so a restart or
// another replica sends what is pending, retried with backoff for up to a
// day, and never in the way of the job that emitted them.
package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
)

// The request headers of a delivery.
const (
	HeaderSignature = "X-Shardgate-Signature-256"
	HeaderDelivery  = "X-Shardgate-Delivery"
	HeaderEvent     = "X-Shardgate-Event"
)

// Event is one thing that happened, as every receiver is told of it.
type Event struct {
	// Event is one of serverconfig.NotificationEvents.
	Event string `json:"event"`
	// Repository is "owner/name".
	Repository string `json:"repository"`
	// PullRequest is the pull request's number; null for a drift issue.
	PullRequest *int   `json:"pull_request"`
	Project     string `json:"project"`
	SHA         string `json:"sha"`
	// Summary is one or a few lines of what happened, redacted by Emit.
	Summary string `json:"summary"`
	// URL is where a person reads more (the pull request, the drift issue).
	URL string    `json:"url"`
	At  time.Time `json:"at"`
}

// PR is n as an Event's PullRequest.
func PR(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

// body is the request body of ev in a receiver's format.
func body(format string, ev Event) ([]byte, error) {
	if format == serverconfig.NotifyFormatSlack {
		return json.Marshal(slackMessage(ev))
	}
	return json.Marshal(ev)
}

// slackMessage is ev as a Slack incoming-webhook message: the same facts as
// text (mrkdwn), the receiver's own rendering of links.
func slackMessage(ev Event) map[string]string {
	var b strings.Builder
	fmt.Fprintf(&b, "*shardgate: %s* in %s", strings.ReplaceAll(ev.Event, "_", " "), slackEscape(ev.Repository))
	if ev.PullRequest != nil {
		fmt.Fprintf(&b, " #%d", *ev.PullRequest)
	}
	if ev.Project != "" {
		fmt.Fprintf(&b, ", project %s", slackEscape(ev.Project))
	}
	if ev.SHA != "" {
		fmt.Fprintf(&b, " at `%s`", slackEscape(shortSHA(ev.SHA)))
	}
	if ev.Summary != "" {
		fmt.Fprintf(&b, "\n%s", slackEscape(ev.Summary))
	}
	if ev.URL != "" {
		fmt.Fprintf(&b, "\n<%s>", slackEscape(ev.URL))
	}
	fmt.Fprintf(&b, "\n%s", ev.At.UTC().Format(time.RFC3339))
	return map[string]string{"text": b.String()}
}

// slackEscape makes text inert in Slack's mrkdwn: no link, mention or
// channel-wide ping can be built from a project name or a summary.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Sign is the X-Shardgate-Signature-256 value of body under secret:
// "sha256=" and the hex HMAC-SHA256, as GitHub signs its webhooks.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify says whether signature is body's under secret, in constant time:
// what a receiver does (and the tests).
func Verify(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(signature), []byte(Sign(secret, body)))
}

// deliveryID is the id of the delivery of the event with key to a
// receiver: the same on every replica, so a second Emit of one event is the
// same delivery (the outbox stores it once).
func deliveryID(receiverKey, eventKey string) string {
	sum := sha256.Sum256([]byte(receiverKey + "\x00" + eventKey))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// WebURL is the web address of GitHub whose API is at apiURL:
// https://github.com for api.github.com, the host itself for GitHub
// Enterprise Server (https://host/api/v3/) and the fake GitHub of tests.
func WebURL(apiURL string) string {
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	host := u.Host
	if h, ok := strings.CutPrefix(host, "api."); ok && strings.Trim(u.Path, "/") == "" {
		host = h // github.com, and GHE.com's api.<name>.ghe.com
	}
	return u.Scheme + "://" + host
}

// PullURL is the web address of a pull request of repository ("owner/name").
func PullURL(web, repository string, number int) string {
	if web == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/pull/%d", web, repository, number)
}

// IssueURL is the web address of an issue of repository ("owner/name").
func IssueURL(web, repository string, number int) string {
	if web == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/issues/%d", web, repository, number)
}
