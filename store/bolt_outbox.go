package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The outbox's buckets: every notification by id, and the ids of those not
// finished (pending or sending), which is all a claim walks.
var (
	bucketNotify     = []byte("notify")      // id → Notification JSON
	bucketNotifyOpen = []byte("notify_open") // id → empty
)

// AddNotification implements Outbox.
func (b *Bolt) AddNotification(ctx context.Context, n *Notification, at time.Time) error {
	if n.ID == "" {
		return errors.New("add notification: empty id")
	}
	now := at.UTC()
	stored := *n
	stored.State, stored.Attempts, stored.LastError, stored.Owner = NotificationPending, 0, "", ""
	stored.NotBefore, stored.LeaseUntil, stored.CreatedAt, stored.UpdatedAt = now, time.Time{}, now, now
	err := b.update(ctx, "add notification", func(tx *bolt.Tx) error {
		all, open, err := outboxBuckets(tx)
		if err != nil {
			return err
		}
		if all.Get([]byte(stored.ID)) != nil {
			return fmt.Errorf("notification %s: %w", stored.ID, ErrDuplicate)
		}
		if err := putNotification(all, &stored); err != nil {
			return err
		}
		return open.Put([]byte(stored.ID), nil)
	})
	if err == nil {
		*n = stored
	}
	return err
}

// ClaimNotification implements Outbox. The search reads first, so a sender
// polling an outbox with nothing due writes (and syncs) nothing.
func (b *Bolt) ClaimNotification(ctx context.Context, owner string, at time.Time, lease time.Duration) (*Notification, error) {
	now := at.UTC()
	var due bool
	err := b.view(ctx, "claim notification", func(tx *bolt.Tx) error {
		all, open := tx.Bucket(bucketNotify), tx.Bucket(bucketNotifyOpen)
		if all == nil || open == nil {
			return nil
		}
		best, err := dueNotification(all, open, now)
		due = best != nil
		return err
	})
	if err != nil || !due {
		return nil, err
	}
	var claimed *Notification
	err = b.update(ctx, "claim notification", func(tx *bolt.Tx) error {
		all, open, err := outboxBuckets(tx)
		if err != nil {
			return err
		}
		best, err := dueNotification(all, open, now)
		if err != nil || best == nil {
			return err
		}
		best.State, best.Owner, best.LeaseUntil, best.UpdatedAt = NotificationSending, owner, now.Add(lease), now
		best.Attempts++
		claimed = best
		return putNotification(all, best)
	})
	if err != nil {
		return nil, err
	}
	return claimed, nil
}

// dueNotification is the open notification due at now that waited longest
// (a pending one due, or a sending one whose lease ended); nil when none is.
func dueNotification(all, open *bolt.Bucket, now time.Time) (*Notification, error) {
	var best *Notification
	err := open.ForEach(func(k, _ []byte) error {
		n, err := getNotification(all, string(k))
		if err != nil {
			return err
		}
		due := n.State == NotificationPending && !n.NotBefore.After(now) ||
			n.State == NotificationSending && n.LeaseUntil.Before(now)
		if due && (best == nil || n.NotBefore.Before(best.NotBefore)) {
			best = n
		}
		return nil
	})
	return best, err
}

// FinishNotification implements Outbox.
func (b *Bolt) FinishNotification(ctx context.Context, id, owner string, sendErr error, retryAt, at time.Time) error {
	return b.update(ctx, "finish notification", func(tx *bolt.Tx) error {
		all, open, err := outboxBuckets(tx)
		if err != nil {
			return err
		}
		n, err := getNotification(all, id)
		if err != nil {
			return err
		}
		if n.State != NotificationSending || n.Owner != owner {
			return fmt.Errorf("notification %s is %s for %q: %w", id, n.State, n.Owner, ErrLeaseLost)
		}
		n.State, n.LastError = finishedState(sendErr, retryAt)
		n.Owner, n.LeaseUntil, n.UpdatedAt = "", time.Time{}, at.UTC()
		if n.State == NotificationPending {
			n.NotBefore = retryAt.UTC()
		} else if err := open.Delete([]byte(id)); err != nil {
			return err
		}
		return putNotification(all, n)
	})
}

// Notifications implements Outbox.
func (b *Bolt) Notifications(ctx context.Context, n int, states ...NotificationState) ([]*Notification, error) {
	want := map[NotificationState]bool{}
	for _, s := range states {
		want[s] = true
	}
	var out []*Notification
	err := b.view(ctx, "list notifications", func(tx *bolt.Tx) error {
		all := tx.Bucket(bucketNotify)
		if all == nil {
			return nil
		}
		return all.ForEach(func(_, v []byte) error {
			var x Notification
			if err := json.Unmarshal(v, &x); err != nil {
				return fmt.Errorf("decode notification: %w", err)
			}
			if want[x.State] {
				out = append(out, &x)
			}
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	if len(out) > n {
		out = out[:n]
	}
	return out, err
}

// CountNotifications implements Outbox.
func (b *Bolt) CountNotifications(ctx context.Context) (map[NotificationState]int, error) {
	counts := map[NotificationState]int{}
	err := b.view(ctx, "count notifications", func(tx *bolt.Tx) error {
		all := tx.Bucket(bucketNotify)
		if all == nil {
			return nil
		}
		return all.ForEach(func(_, v []byte) error {
			var x struct {
				State NotificationState `json:"state"`
			}
			if err := json.Unmarshal(v, &x); err != nil {
				return fmt.Errorf("decode notification: %w", err)
			}
			counts[x.State]++
			return nil
		})
	})
	return counts, err
}

// PruneNotifications implements Outbox.
func (b *Bolt) PruneNotifications(ctx context.Context, olderThan time.Time) (int, error) {
	pruned := 0
	err := b.update(ctx, "prune notifications", func(tx *bolt.Tx) error {
		pruned = 0
		all, _, err := outboxBuckets(tx)
		if err != nil {
			return err
		}
		var old [][]byte
		err = all.ForEach(func(k, v []byte) error {
			var x Notification
			if err := json.Unmarshal(v, &x); err != nil {
				return fmt.Errorf("decode notification: %w", err)
			}
			finished := x.State == NotificationSent || x.State == NotificationFailed
			if finished && x.UpdatedAt.Before(olderThan) {
				old = append(old, clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range old {
			if err := all.Delete(k); err != nil {
				return err
			}
		}
		pruned = len(old)
		return nil
	})
	return pruned, err
}

func outboxBuckets(tx *bolt.Tx) (all, open *bolt.Bucket, err error) {
	if all, err = tx.CreateBucketIfNotExists(bucketNotify); err != nil {
		return nil, nil, err
	}
	if open, err = tx.CreateBucketIfNotExists(bucketNotifyOpen); err != nil {
		return nil, nil, err
	}
	return all, open, nil
}

func getNotification(all *bolt.Bucket, id string) (*Notification, error) {
	v := all.Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("notification %s: %w", id, ErrNotFound)
	}
	var n Notification
	if err := json.Unmarshal(v, &n); err != nil {
		return nil, fmt.Errorf("decode notification %s: %w", id, err)
	}
	return &n, nil
}

func putNotification(all *bolt.Bucket, n *Notification) error {
	v, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode notification: %w", err)
	}
	return all.Put([]byte(n.ID), v)
}
