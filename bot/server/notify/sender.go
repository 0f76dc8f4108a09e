package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/shardgate/shardgate/store"
)

// refusal is why an attempt failed; permanent when a retry cannot change it.
type refusal struct {
	msg       string
	permanent bool
}

func (r *refusal) Error() string { return r.msg }

func retryable(format string, a ...any) error {
	return &refusal{msg: fmt.Sprintf(format, a...)}
}

func permanent(format string, a ...any) error {
	return &refusal{msg: fmt.Sprintf(format, a...), permanent: true}
}

// SendDue sends every delivery due now, one after another, and says how
// many attempts it made. A delivery a receiver refused for a while (no
// answer, 5xx) is handed back for later, on Backoff, until MaxAge.
func (n *Notifier) SendDue(ctx context.Context) int {
	if n == nil {
		return 0
	}
	attempts := 0
	for ctx.Err() == nil {
		d, err := n.outbox.ClaimNotification(ctx, n.owner, n.Now(), n.Lease)
		if err != nil {
			if ctx.Err() == nil {
				n.log.WithError(err).Warn("claim a notification")
			}
			return attempts
		}
		if d == nil {
			return attempts
		}
		attempts++
		n.attempt(ctx, d)
	}
	return attempts
}

// attempt sends d once and records the outcome.
func (n *Notifier) attempt(ctx context.Context, d *store.Notification) {
	log := n.log.WithField("delivery", d.ID).WithField("event", d.Event).WithField("attempt", d.Attempts)
	rc, ok := n.receivers[d.Receiver]
	var sendErr error
	if !ok {
		sendErr = permanent("the receiver is no longer configured")
	} else {
		log = log.WithField("receiver", rc.Host())
		sendErr = n.post(ctx, rc.URL, rc.Secret.Reveal(), d)
	}
	var retryAt time.Time
	outcome := "sent"
	if sendErr != nil {
		now := n.Now()
		next := now.Add(n.Backoff.Delay(d.Attempts))
		var r *refusal
		if errors.As(sendErr, &r) && !r.permanent && next.Sub(d.CreatedAt) < n.MaxAge {
			retryAt, outcome = next, "retried"
		} else {
			outcome = "failed"
		}
		sendErr = n.redact.Error(sendErr)
	}
	n.metrics.ObserveNotification(outcome)
	if err := n.outbox.FinishNotification(context.WithoutCancel(ctx), d.ID, n.owner, sendErr, retryAt, n.Now()); err != nil {
		log.WithError(err).Warn("record a notification's attempt")
		return
	}
	switch outcome {
	case "sent":
		log.Info("notification delivered")
	case "retried":
		log.WithError(sendErr).WithField("retry_at", retryAt.UTC().Format(time.RFC3339)).Warn("notification not delivered: will retry")
	default:
		log.WithError(sendErr).Error("notification not delivered: given up")
	}
}

// post sends d's body to url, signed with secret. It returns nil on a 2xx,
// a permanent refusal when the receiver refused it for good (a 4xx other
// than 408 and 429, a redirect), else a refusal worth a retry.
func (n *Notifier) post(ctx context.Context, url, secret string, d *store.Notification) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(d.Body))
	if err != nil {
		return permanent("the receiver URL does not make a request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "shardgate-notify")
	req.Header.Set(HeaderSignature, Sign(secret, d.Body))
	req.Header.Set(HeaderDelivery, d.ID)
	req.Header.Set(HeaderEvent, d.Event)
	resp, err := n.client.Do(req)
	if err != nil {
		// The URL may hold a token: say what failed, not where.
		return retryable("no answer from the receiver")
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c >= 500, c == http.StatusRequestTimeout, c == http.StatusTooManyRequests:
		return retryable("the receiver answered %d", c)
	default:
		return permanent("the receiver answered %d", c)
	}
}
