package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const notificationColumns = `id, receiver, event, body, state, attempts, last_error, not_before, owner,
	lease_until, created_at, updated_at`

func scanNotification(row pgx.Row) (*Notification, error) {
	var n Notification
	var lease *time.Time
	var state string
	if err := row.Scan(&n.ID, &n.Receiver, &n.Event, &n.Body, &state, &n.Attempts, &n.LastError,
		&n.NotBefore, &n.Owner, &lease, &n.CreatedAt, &n.UpdatedAt); err != nil {
		return nil, err
	}
	n.State = NotificationState(state)
	if lease != nil {
		n.LeaseUntil = *lease
	}
	return &n, nil
}

// AddNotification implements Outbox.
func (p *Postgres) AddNotification(ctx context.Context, n *Notification, at time.Time) error {
	if n.ID == "" {
		return errors.New("add notification: empty id")
	}
	now := pgTime(at)
	stored, err := scanNotification(p.pool.QueryRow(ctx, `INSERT INTO notifications
		(id, receiver, event, body, state, not_before, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 'pending', $5, $5, $5) RETURNING `+notificationColumns,
		pgText(n.ID), pgText(n.Receiver), pgText(n.Event), n.Body, now))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		return fmt.Errorf("add notification %s: %w", n.ID, ErrDuplicate)
	}
	if err != nil {
		return fmt.Errorf("add notification: %w", err)
	}
	*n = *stored
	return nil
}

// ClaimNotification implements Outbox: the due row that waited longest,
// skipping rows another replica is claiming (SKIP LOCKED).
func (p *Postgres) ClaimNotification(ctx context.Context, owner string, at time.Time, lease time.Duration) (*Notification, error) {
	now := pgTime(at)
	n, err := scanNotification(p.pool.QueryRow(ctx, `WITH pick AS (
		SELECT id FROM notifications
		WHERE state = 'pending' AND not_before <= $1 OR state = 'sending' AND lease_until < $1
		ORDER BY not_before, id LIMIT 1 FOR UPDATE SKIP LOCKED)
	UPDATE notifications SET state = 'sending', owner = $2, lease_until = $3, attempts = attempts + 1, updated_at = $1
	WHERE id = (SELECT id FROM pick) RETURNING `+notificationColumns,
		now, pgText(owner), now.Add(lease)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim notification: %w", err)
	}
	return n, nil
}

// FinishNotification implements Outbox.
func (p *Postgres) FinishNotification(ctx context.Context, id, owner string, sendErr error, retryAt, at time.Time) error {
	state, msg := finishedState(sendErr, retryAt)
	now := pgTime(at)
	notBefore := now
	if state == NotificationPending {
		notBefore = pgTime(retryAt)
	}
	tag, err := p.pool.Exec(ctx, `UPDATE notifications SET state = $3, last_error = $4, owner = '', lease_until = NULL,
		updated_at = $5, not_before = CASE WHEN $3 = 'pending' THEN $6 ELSE not_before END
		WHERE id = $1 AND state = 'sending' AND owner = $2`,
		pgText(id), pgText(owner), string(state), pgText(msg), now, notBefore)
	if err != nil {
		return fmt.Errorf("finish notification: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var cur, holder string
	err = p.pool.QueryRow(ctx, `SELECT state, owner FROM notifications WHERE id = $1`, pgText(id)).Scan(&cur, &holder)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("finish notification %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("finish notification: %w", err)
	}
	return fmt.Errorf("notification %s is %s for %q: %w", id, cur, holder, ErrLeaseLost)
}

// Notifications implements Outbox.
func (p *Postgres) Notifications(ctx context.Context, n int, states ...NotificationState) ([]*Notification, error) {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = string(s)
	}
	rows, err := p.pool.Query(ctx, `SELECT `+notificationColumns+` FROM notifications
		WHERE state = ANY($1) ORDER BY updated_at DESC, id LIMIT $2`, names, n)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Notification, error) { return scanNotification(r) })
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	return out, nil
}

// CountNotifications implements Outbox.
func (p *Postgres) CountNotifications(ctx context.Context) (map[NotificationState]int, error) {
	rows, err := p.pool.Query(ctx, `SELECT state, count(*) FROM notifications GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("count notifications: %w", err)
	}
	counts := map[NotificationState]int{}
	var state string
	var c int
	_, err = pgx.ForEachRow(rows, []any{&state, &c}, func() error {
		counts[NotificationState(state)] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count notifications: %w", err)
	}
	return counts, nil
}

// PruneNotifications implements Outbox.
func (p *Postgres) PruneNotifications(ctx context.Context, olderThan time.Time) (int, error) {
	tag, err := p.pool.Exec(ctx, `DELETE FROM notifications WHERE state IN ('sent', 'failed') AND updated_at < $1`,
		olderThan.UTC())
	if err != nil {
		return 0, fmt.Errorf("prune notifications: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// pgTime is t as PostgreSQL keeps it: UTC, microseconds.
func pgTime(t time.Time) time.Time { return t.UTC().Round(time.Microsecond) }
