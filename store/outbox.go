package store

import (
	"context"
	"time"
)

// NotificationState is where an outgoing notification is in its life.
type NotificationState string

const (
	// NotificationPending: waiting to be sent (first time or a retry).
	NotificationPending NotificationState = "pending"
	// NotificationSending: claimed by a sender until its lease ends.
	NotificationSending NotificationState = "sending"
	// NotificationSent: the receiver accepted it.
	NotificationSent NotificationState = "sent"
	// NotificationFailed: given up on (refused for good, or retried too long).
	NotificationFailed NotificationState = "failed"
)

// Notification is one delivery of one event to one receiver: the outbox
// keeps it until the receiver accepted it or the sender gave up, so a
// restart or another replica sends what is pending.
type Notification struct {
	// ID is the delivery id the receiver sees (X-Shardgate-Delivery), chosen
	// by the caller; a second AddNotification of an id is ErrDuplicate, which
	// is how an event is delivered once per receiver.
	ID string `json:"id"`
	// Receiver names the configured receiver it goes to.
	Receiver string `json:"receiver"`
	Event    string `json:"event"`
	// Body is the exact request body: what is signed and sent, every attempt.
	Body      []byte            `json:"body"`
	State     NotificationState `json:"state"`
	Attempts  int               `json:"attempts"`
	LastError string            `json:"last_error,omitempty"`
	// NotBefore is when a pending notification is due.
	NotBefore time.Time `json:"not_before"`
	Owner     string    `json:"owner,omitempty"`
	// LeaseUntil ends a sending claim: after it another sender takes it.
	LeaseUntil time.Time `json:"lease_until,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Outbox keeps outgoing notifications (the webhooks shardgate sends).
// Bolt and Postgres implement it; senders on several replicas share it
// through claims as workers share jobs.
type Outbox interface {
	//
	// Its times come from the caller (now): the sender's injected clock
	// decides what is due and when a lease ends, as replicas' clocks agree
	// (see Postgres).

	// AddNotification stores n pending and due at now (its State, Attempts,
	// Owner and times are set here). ErrDuplicate when n.ID is stored already;
	// then nothing changes.
	AddNotification(ctx context.Context, n *Notification, now time.Time) error
	// ClaimNotification takes the due pending notification that waited
	// longest, or a sending one whose lease ended before now (its sender
	// died), for owner until now+lease, counting an attempt; (nil, nil) when
	// none is due.
	ClaimNotification(ctx context.Context, owner string, now time.Time, lease time.Duration) (*Notification, error)
	// FinishNotification ends, at now, an attempt of a notification claimed
	// by owner: sent when sendErr is nil; pending again at retryAt when
	// sendErr is set and retryAt is not zero; failed for good otherwise.
	// ErrLeaseLost when owner no longer holds it, ErrNotFound for an unknown
	// id.
	FinishNotification(ctx context.Context, id, owner string, sendErr error, retryAt, now time.Time) error
	// Notifications lists up to n notifications in one of states, the most
	// recently changed first.
	Notifications(ctx context.Context, n int, states ...NotificationState) ([]*Notification, error)
	// CountNotifications is how many notifications are in each state.
	CountNotifications(ctx context.Context) (map[NotificationState]int, error)
	// PruneNotifications deletes sent and failed notifications last changed
	// before olderThan, and says how many.
	PruneNotifications(ctx context.Context, olderThan time.Time) (int, error)
}

var (
	_ Outbox = (*Bolt)(nil)
	_ Outbox = (*Postgres)(nil)
)

// finishedState is the state an attempt ends in (see FinishNotification).
func finishedState(sendErr error, retryAt time.Time) (NotificationState, string) {
	switch {
	case sendErr == nil:
		return NotificationSent, ""
	case !retryAt.IsZero():
		return NotificationPending, sendErr.Error()
	default:
		return NotificationFailed, sendErr.Error()
	}
}
