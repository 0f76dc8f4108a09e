package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/store"
)

const secret = "notify-secret-0123456789"

// receiver is an HTTP receiver that records what it got and answers with
// the next of its codes (200 once they run out).
type receiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	codes []int
	got   []delivery
}

type delivery struct {
	id, event, signature string
	body                 []byte
	accepted             bool
}

func newReceiver(t *testing.T, codes ...int) *receiver {
	r := &receiver{codes: codes}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		code := http.StatusOK
		if len(r.codes) > 0 {
			code, r.codes = r.codes[0], r.codes[1:]
		}
		r.got = append(r.got, delivery{id: req.Header.Get(HeaderDelivery), event: req.Header.Get(HeaderEvent),
			signature: req.Header.Get(HeaderSignature), body: b, accepted: code < 300})
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func (r *receiver) config(events ...string) serverconfig.NotificationReceiver {
	if len(events) == 0 {
		events = serverconfig.NotificationEvents
	}
	return serverconfig.NotificationReceiver{URL: r.srv.URL + "/hook", Secret: serverconfig.NewSecret(secret),
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

	got := rcv.deliveries()
	require.Len(t, got, 3)
	var accepted []delivery
	for _, d := range got {
		require.Equal(t, got[0].id, d.id, "every attempt carries the same delivery id")
		require.Equal(t, got[0].body, d.body)
		require.True(t, Verify(secret, d.body, d.signature), "signature %s", d.signature)
		require.Equal(t, "apply_succeeded", d.event)
		if d.accepted {
			accepted = append(accepted, d)
		}
	}
	require.Len(t, accepted, 1)
	var body map[string]any
	require.NoError(t, json.Unmarshal(accepted[0].body, &body))
	require.Equal(t, map[string]any{"event": "apply_succeeded", "repository": "acme/streams", "pull_request": float64(7),
		"project": "streams", "sha": "0123456789abcdef0123", "summary": "applied; the coordinator has converged",
		"url": "https://github.com/acme/streams/pull/7", "at": e.clk.Now().Add(-DefaultBackoff.Initial*3 - time.Hour).UTC().Format(time.RFC3339)}, body)
	require.False(t, Verify("another-secret", accepted[0].body, accepted[0].signature))

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
	require.Len(t, all.deliveries(), 1)
	require.Empty(t, failures.deliveries(), "it asked for apply_failed only")

	n.Emit(ctx, "apply 2", applied(e.clk.Now()))
	n.SendDue(ctx)
	require.Len(t, all.deliveries(), 2, "another event is another delivery")
	require.NotEqual(t, all.deliveries()[0].id, all.deliveries()[1].id)
}

func TestADeliveryIsGivenUpAfterADayOrOnARefusal(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	down := newReceiver(t, repeat(500, 100)...)
	gone := newReceiver(t, 404)
	n := e.notifier(t, "a", nil, down.config(), gone.config())
	n.Emit(ctx, "apply 1", applied(e.clk.Now()))
	n.SendDue(ctx)
	require.Len(t, gone.deliveries(), 1)
	for range 200 {
		e.clk.Advance(10 * time.Minute)
		n.SendDue(ctx)
	}
	attempts := len(down.deliveries())
	require.Greater(t, attempts, 10, "retried with backoff")
	require.Less(t, attempts, 40, "backed off, not every poll")
	require.Len(t, gone.deliveries(), 1, "a 404 is not retried")

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
	rcv.srv.Close() // nobody listens
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
	require.Len(t, rcv.deliveries(), 1)
	require.Equal(t, d.ID, rcv.deliveries()[0].id)
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
	for _, r := range []*receiver{plain, slack} {
		require.Len(t, r.deliveries(), 1)
		d := r.deliveries()[0]
		require.NotContains(t, string(d.body), coordPassword)
		require.NotContains(t, string(d.body), secret)
		require.Contains(t, string(d.body), redact.Redacted)
		require.True(t, Verify(secret, d.body, d.signature))
	}
	var msg map[string]string
	require.NoError(t, json.Unmarshal(slack.deliveries()[0].body, &msg))
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
