package notify

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/internal/testing/notifytest"
	"github.com/shardgate/shardgate/store"
)

const secret = "notify-secret-0123456789"

// receiver is a test receiver and its configuration.
type receiver struct {
	*notifytest.Receiver
	close func()
}

func newReceiver(t *testing.T, codes ...int) receiver {
	r, closeIt := notifytest.New(t, codes...)
	return receiver{Receiver: r, close: closeIt}
}

func (r receiver) config(events ...string) serverconfig.NotificationReceiver {
	if len(events) == 0 {
		events = serverconfig.NotificationEvents
	}
	return serverconfig.NotificationReceiver{URL: r.URL + "/hook", Secret: serverconfig.NewSecret(secret),
		Events: events, Format: serverconfig.NotifyFormatJSON, InsecureHTTP: true}
}

type env struct {
	st  *store.Bolt
	clk *fakeclock.Clock
}

func newEnv(t *testing.T) *env {
	clk := fakeclock.New(fakeclock.Date(2026, 3, 1, 12, 0, 0))
	// The store keeps the real time: the notifier's clock alone says what
	// is due, as in the service, whose store is not on its fake clock.
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return &env{st: st, clk: clk}
}

// notifier is a sender on e's store, named owner, of receivers.
func (e *env) notifier(t *testing.T, owner string, r *redact.Redactor, receivers ...serverconfig.NotificationReceiver) *Notifier {
	n, err := New(receivers, e.st, owner, r, nil, logrus.NewEntry(logrus.New()))
	require.NoError(t, err)
	n.Now = e.clk.Now
	n.Backoff.Jitter = 0
	return n
}

func applied(at time.Time) Event {
	return Event{Event: serverconfig.EventApplySucceeded, Repository: "acme/streams", PullRequest: PR(7), Project: "streams",
		SHA: "0123456789abcdef0123", Summary: "applied; the coordinator has converged", URL: "https://github.com/acme/streams/pull/7", At: at}
}

func TestAReceiverThatFailsTwiceGetsTheEventOnceWithOneDeliveryID(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	rcv := newReceiver(t, 500, 500)
	n := e.notifier(t, "a", nil, rcv.config())
	n.Emit(ctx, "apply 1", applied(e.clk.Now()))

	require.Equal(t, 1, n.SendDue(ctx))
	require.Zero(t, n.SendDue(ctx), "the retry is not due yet")
	e.clk.Advance(DefaultBackoff.Initial)
	require.Equal(t, 1, n.SendDue(ctx))
	e.clk.Advance(2 * DefaultBackoff.Initial)
	require.Equal(t, 1, n.SendDue(ctx))
	e.clk.Advance(time.Hour)
	require.Zero(t, n.SendDue(ctx), "delivered: nothing is sent again")

	got := rcv.Requests()
	require.Len(t, got, 3)
	var accepted []notifytest.Request
	for _, d := range got {
		require.Equal(t, got[0].Delivery, d.Delivery, "every attempt carries the same delivery id")
		require.Equal(t, got[0].Body, d.Body)
		require.True(t, Verify(secret, d.Body, d.Signature), "signature %s", d.Signature)
		require.Equal(t, "apply_succeeded", d.Event)
		if d.Code < 300 {
			accepted = append(accepted, d)
		}
	}
	require.Len(t, accepted, 1)
	var body map[string]any
	require.NoError(t, json.Unmarshal(accepted[0].Body, &body))
	require.Equal(t, map[string]any{"event": "apply_succeeded", "repository": "acme/streams", "pull_request": float64(7),
		"project": "streams", "sha": "0123456789abcdef0123", "summary": "applied; the coordinator has converged",
		"url": "https://github.com/acme/streams/pull/7", "at": e.clk.Now().Add(-DefaultBackoff.Initial*3 - time.Hour).UTC().Format(time.RFC3339)}, body)
	require.False(t, Verify("another-secret", accepted[0].Body, accepted[0].Signature))

	counts, err := e.st.CountNotifications(ctx)
	require.NoError(t, err)
	require.Equal(t, map[store.NotificationState]int{store.NotificationSent: 1}, counts)
}

func TestAnEventIsDeliveredOncePerReceiverThatAskedForIt(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	all, failures := newReceiver(t), newReceiver(t)
	n := e.notifier(t, "a", nil, all.config(), failures.config(serverconfig.EventApplyFailed))
	n.Emit(ctx, "apply 1", applied(e.clk.Now()))
	n.Emit(ctx, "apply 1", applied(e.clk.Now())) // the same event again (a resumed job)
	other := e.notifier(t, "b", nil, all.config(), failures.config(serverconfig.EventApplyFailed))
	other.Emit(ctx, "apply 1", applied(e.clk.Now())) // and from another replica
	n.SendDue(ctx)
	other.SendDue(ctx)
	require.Len(t, all.Requests(), 1)
	require.Empty(t, failures.Requests(), "it asked for apply_failed only")

	n.Emit(ctx, "apply 2", applied(e.clk.Now()))
	n.SendDue(ctx)
	require.Len(t, all.Requests(), 2, "another event is another delivery")
	require.NotEqual(t, all.Requests()[0].Delivery, all.Requests()[1].Delivery)
}

func TestADeliveryIsGivenUpAfterADayOrOnARefusal(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	down := newReceiver(t, repeat(500, 100)...)
	gone := newReceiver(t, 404)
	n := e.notifier(t, "a", nil, down.config(), gone.config())
	n.Emit(ctx, "apply 1", applied(e.clk.Now()))
	n.SendDue(ctx)
	require.Len(t, gone.Requests(), 1)
	for range 200 {
		e.clk.Advance(10 * time.Minute)
		n.SendDue(ctx)
	}
	attempts := len(down.Requests())
	require.Greater(t, attempts, 10, "retried with backoff")
	require.Less(t, attempts, 40, "backed off, not every poll")
	require.Len(t, gone.Requests(), 1, "a 404 is not retried")

	failed, err := e.st.Notifications(ctx, 10, store.NotificationFailed)
	require.NoError(t, err)
	require.Len(t, failed, 2)
	for _, f := range failed {
		require.LessOrEqual(t, f.UpdatedAt.Sub(f.CreatedAt), DefaultMaxAge, "given up within a day")
		require.Regexp(t, `^the receiver answered (500|404)$`, f.LastError)
	}
}

func TestNoAnswerIsRetried(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	rcv := newReceiver(t)
	cfg := rcv.config()
	rcv.close() // nobody listens
	n := e.notifier(t, "a", nil, cfg)
	n.Emit(ctx, "apply 1", applied(e.clk.Now()))
	require.Equal(t, 1, n.SendDue(ctx))
	open, err := e.st.Notifications(ctx, 10, store.NotificationPending)
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, "no answer from the receiver", open[0].LastError, "the URL is not in the error")
}

// A sender that died holding a delivery (its process crashed mid-send)
// leaves it to another once the lease is over: a restart or another
// replica sends what was pending.
func TestAnotherSenderTakesOverWhatADeadOneHeld(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	rcv := newReceiver(t)
	dead := e.notifier(t, "dead", nil, rcv.config())
	dead.Emit(ctx, "apply 1", applied(e.clk.Now()))
	d, err := e.st.ClaimNotification(ctx, "dead", e.clk.Now(), dead.Lease) // claimed, never finished
	require.NoError(t, err)
	require.NotNil(t, d)

	next := e.notifier(t, "next", nil, rcv.config())
	require.Zero(t, next.SendDue(ctx), "the lease holds")
	e.clk.Advance(DefaultLease + time.Second)
	require.Equal(t, 1, next.SendDue(ctx))
	require.Len(t, rcv.Requests(), 1)
	require.Equal(t, d.ID, rcv.Requests()[0].Delivery)
}

func TestPayloadsCarryNoSecret(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	plain, slack := newReceiver(t), newReceiver(t)
	slackCfg := slack.config()
	slackCfg.Format = serverconfig.NotifyFormatSlack
	const coordPassword = "coord-password-77"
	cfg := &serverconfig.Config{Coordinators: []serverconfig.CoordinatorCredentials{{Password: serverconfig.NewSecret(coordPassword)}},
		Notifications: []serverconfig.NotificationReceiver{plain.config(), slackCfg}}
	n := e.notifier(t, "a", cfg.Redactor(), cfg.Notifications...)
	ev := applied(e.clk.Now())
	ev.Event = serverconfig.EventApplyFailed
	ev.Summary = "terraform apply failed: auth " + coordPassword + " refused; key " + secret
	n.Emit(ctx, "apply 1", ev)
	n.SendDue(ctx)
	for _, r := range []receiver{plain, slack} {
		require.Len(t, r.Requests(), 1)
		d := r.Requests()[0]
		require.NotContains(t, string(d.Body), coordPassword)
		require.NotContains(t, string(d.Body), secret)
		require.Contains(t, string(d.Body), redact.Redacted)
		require.True(t, Verify(secret, d.Body, d.Signature))
	}
	var msg map[string]string
	require.NoError(t, json.Unmarshal(slack.Requests()[0].Body, &msg))
	require.Contains(t, msg["text"], "apply failed")
	require.Contains(t, msg["text"], "acme/streams #7, project streams at `0123456789ab`")
	require.Contains(t, msg["text"], "<https://github.com/acme/streams/pull/7>")
}

func TestSlackTextIsInert(t *testing.T) {
	ev := applied(fakeclock.Date(2026, 3, 1, 12, 0, 0))
	ev.Project = "<!channel> <https://evil.example|click>"
	b, err := body(serverconfig.NotifyFormatSlack, ev)
	require.NoError(t, err)
	var msg map[string]string
	require.NoError(t, json.Unmarshal(b, &msg))
	require.NotContains(t, msg["text"], "<!channel>")
	require.NotContains(t, msg["text"], "<https://evil")
}

func TestANilNotifierDoesNothing(t *testing.T) {
	n, err := New(nil, nil, "a", nil, nil, logrus.NewEntry(logrus.New()))
	require.NoError(t, err)
	require.Nil(t, n)
	n.Emit(context.Background(), "k", Event{})
	require.Zero(t, n.SendDue(context.Background()))
}

func repeat(code, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = code
	}
	return out
}
