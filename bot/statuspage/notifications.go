package statuspage

import (
	"context"
	"time"
)

// Notifications tells what is pending and what failed of the notifications
// shardgate sends (the configured receivers' webhooks).
type Notifications interface {
	// PendingNotifications and FailedNotifications are the deliveries
	// waiting to be sent (or retried, or being sent) and those given up,
	// the most recently changed first.
	PendingNotifications(ctx context.Context) ([]Notification, error)
	FailedNotifications(ctx context.Context) ([]Notification, error)
}

// Notification is one delivery of an event to a receiver.
type Notification struct {
	ID    string
	Event string
	// Receiver is the receiver's host: its URL may hold a token.
	Receiver string
	Attempts int
	Error    string
	// NextTry is when a pending delivery is due; At its last change.
	NextTry, At time.Time
}

type notificationView struct {
	Delivery, Event, Receiver string
	Attempts                  int
	Error, NextTry, At        string
}

// notifications fills v's pending and failed deliveries, and the banner's
// item for those that failed.
func (h *Handler) notifications(ctx context.Context, v *overview, problem func(string, error)) {
	if h.o.Notifications == nil {
		return
	}
	v.NotificationsOn = true
	view := func(ns []Notification) []notificationView {
		out := make([]notificationView, 0, len(ns))
		for _, n := range ns {
			out = append(out, notificationView{Delivery: n.ID, Event: n.Event, Receiver: n.Receiver, Attempts: n.Attempts,
				Error: firstLine(n.Error), NextTry: stamp(n.NextTry), At: stamp(n.At)})
		}
		return out
	}
	if pending, err := h.o.Notifications.PendingNotifications(ctx); err != nil {
		problem("read the pending notifications", err)
	} else {
		v.NotifyPending = view(pending)
	}
	if failed, err := h.o.Notifications.FailedNotifications(ctx); err != nil {
		problem("read the failed notifications", err)
	} else {
		v.NotifyFailed = view(failed)
		if len(failed) > 0 {
			v.Banner = append(v.Banner, plural(len(failed), "notification")+" not delivered (see Notifications)")
		}
	}
}
