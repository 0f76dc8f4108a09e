package notify

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/server/metrics"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/internal/retry"
	"github.com/shardgate/shardgate/store"
)

// Defaults of the sender.
const (
	// DefaultMaxAge is how long a delivery is retried before it is given up.
	DefaultMaxAge = 24 * time.Hour
	// DefaultTimeout bounds one attempt: a receiver that has not answered
	// by then gets the delivery again later.
	DefaultTimeout = 30 * time.Second
	// DefaultLease is how long a claimed delivery is this sender's: longer
	// than an attempt, so no other replica sends it at the same time.
	DefaultLease = 2 * time.Minute
	// DefaultPoll is how often the sender looks for due deliveries when
	// nothing woke it (a retry coming due, another replica's event).
	DefaultPoll = 5 * time.Second
	// DefaultRetention is how long sent and failed deliveries are kept (the
	// status page lists the failed ones).
	DefaultRetention = 7 * 24 * time.Hour
)

// DefaultBackoff is the pause after each failed attempt: 10s doubling to an
// hour, so a day holds about thirty attempts.
var DefaultBackoff = retry.Backoff{Initial: 10 * time.Second, Max: time.Hour, Jitter: 0.2}

// Notifier emits events into the store's outbox and sends them. A nil
// *Notifier (no receivers configured) does nothing.
type Notifier struct {
	receivers map[string]serverconfig.NotificationReceiver
	order     []serverconfig.NotificationReceiver
	outbox    store.Outbox
	owner     string
	log       *logrus.Entry
	redact    *redact.Redactor
	metrics   *metrics.Metrics
	client    *http.Client
	wake      chan struct{}

	// Now is the notifier's clock: when deliveries are due, how old they are.
	Now     func() time.Time
	Backoff retry.Backoff
	MaxAge  time.Duration
	Lease   time.Duration
	// Poll is the wait between two looks for due deliveries (real time: the
	// wait only paces the loop; what is due is judged on Now).
	Poll      time.Duration
	Retention time.Duration
}

// New is the notifier of receivers, keeping deliveries in outbox; nil when
// there are no receivers. owner names this process in the outbox's claims
// (unique per process and start, as a job's owner). Emitted summaries are
// redacted with r.
func New(receivers []serverconfig.NotificationReceiver, outbox store.Outbox, owner string, r *redact.Redactor,
	m *metrics.Metrics, log *logrus.Entry) (*Notifier, error) {
	if len(receivers) == 0 {
		return nil, nil
	}
	if outbox == nil {
		return nil, errors.New("notifications: the store keeps no outbox")
	}
	n := &Notifier{receivers: map[string]serverconfig.NotificationReceiver{}, order: receivers, outbox: outbox,
		owner: owner, log: log.WithField("component", "notify"), redact: r, metrics: m, wake: make(chan struct{}, 1),
		Now: time.Now, Backoff: DefaultBackoff, MaxAge: DefaultMaxAge, Lease: DefaultLease, Poll: DefaultPoll,
		Retention: DefaultRetention}
	for _, rc := range receivers {
		n.receivers[rc.Key()] = rc
	}
	n.client = &http.Client{
		Timeout: DefaultTimeout,
		// A redirect is not followed: the signed body goes where it was
		// configured to, or nowhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return n, nil
}

// WithClient replaces the HTTP client (tests: a receiver's TLS roots).
func (n *Notifier) WithClient(c *http.Client) {
	c.CheckRedirect = n.client.CheckRedirect
	n.client = c
}

// Emit puts ev into the outbox once for each receiver that asked for its
// kind, the summary redacted, and wakes the sender. key names the event
// (the same key is the same event: emitted twice, it is delivered once).
// It never fails its caller: a delivery it cannot store is logged.
func (n *Notifier) Emit(ctx context.Context, key string, ev Event) {
	if n == nil {
		return
	}
	ev.Summary = n.redact.Redact(ev.Summary)
	if ev.At.IsZero() {
		ev.At = n.Now().UTC()
	}
	ctx = context.WithoutCancel(ctx) // the job's end must not lose its event
	added := false
	for _, rc := range n.order {
		if !rc.Wants(ev.Event) {
			continue
		}
		b, err := body(rc.Format, ev)
		if err == nil {
			err = n.outbox.AddNotification(ctx, &store.Notification{
				ID: deliveryID(rc.Key(), ev.Event+"\x00"+key), Receiver: rc.Key(), Event: ev.Event, Body: b}, n.Now())
		}
		switch {
		case errors.Is(err, store.ErrDuplicate):
		case err != nil:
			n.log.WithError(n.redact.Error(err)).WithField("event", ev.Event).WithField("receiver", rc.Host()).
				Error("store a notification: it will not be sent")
		default:
			added = true
		}
	}
	if added {
		select {
		case n.wake <- struct{}{}:
		default:
		}
	}
}

// Run sends due deliveries until ctx ends: at once when Emit wakes it, else
// every Poll; it prunes old finished ones now and then.
func (n *Notifier) Run(ctx context.Context) {
	if n == nil {
		return
	}
	poll := time.NewTimer(0)
	defer poll.Stop()
	var lastPrune time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		case <-n.wake:
		}
		n.SendDue(ctx)
		if now := n.Now(); now.Sub(lastPrune) >= time.Hour {
			lastPrune = now
			if _, err := n.outbox.PruneNotifications(ctx, now.Add(-n.Retention)); err != nil && ctx.Err() == nil {
				n.log.WithError(err).Warn("prune old notifications")
			}
		}
		if !poll.Stop() {
			select {
			case <-poll.C:
			default:
			}
		}
		poll.Reset(n.Poll)
	}
}
