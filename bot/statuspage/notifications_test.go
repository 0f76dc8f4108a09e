package statuspage

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/redact"
)

type fakeNotifications struct{ pending, failed []Notification }

func (f fakeNotifications) PendingNotifications(context.Context) ([]Notification, error) {
	return f.pending, nil
}
func (f fakeNotifications) FailedNotifications(context.Context) ([]Notification, error) {
	return f.failed, nil
}

// The page lists the pending and the failed notification deliveries, with
// their receiver's host, attempts and error (redacted, escaped), and the
// banner says that some failed.
func TestNotificationsAreShown(t *testing.T) {
	const secret = "notify-secret-0123456789"
	now := fakeclock.Date(2026, 12, 2, 9, 30, 0) // where newScene's clock stands
	n := fakeNotifications{
		pending: []Notification{{ID: "0f1e2d3c-aaaa", Event: "apply_succeeded", Receiver: "hooks.example.com", Attempts: 2,
			Error: "the receiver answered 500", NextTry: now.Add(20 * time.Second), At: now}},
		failed: []Notification{{ID: "9a8b7c6d-bbbb", Event: "drift_opened", Receiver: "chat.example.com", Attempts: 31,
			Error: "the receiver answered 404 " + hostile("notify") + " " + secret, At: now.Add(-time.Minute)}},
	}
	s := newScene(t, "bolt", Options{Notifications: n, Redactor: redact.New(secret)})
	resp, body := get(t, s.srv.URL+"/", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, want := range []string{
		"<h2>Notifications</h2>",
		"1 notification not delivered (see Notifications)",
		`<tr class="notification pending"><td><code>0f1e2d3c-aaaa</code></td><td><code>apply_succeeded</code></td><td>hooks.example.com</td>`,
		"<td>2</td><td>" + pageTime(now.Add(20*time.Second)) + "</td><td>the receiver answered 500</td>",
		`<tr class="notification failed"><td><code>9a8b7c6d-bbbb</code></td><td><code>drift_opened</code></td><td>chat.example.com</td>`,
	} {
		require.Contains(t, body, want)
	}
	require.NotContains(t, body, secret)
	require.NotContains(t, body, `<script>alert("notify")`, "escaped")
	require.Contains(t, body, "&lt;script&gt;")

	// Without receivers the section is left out.
	s = newScene(t, "bolt", Options{})
	_, body = get(t, s.srv.URL+"/", "")
	require.NotContains(t, body, "<h2>Notifications</h2>")
}
