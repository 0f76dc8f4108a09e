package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// JobsByState implements JobAdmin.
func (p *Postgres) JobsByState(ctx context.Context, state JobState, after string, limit int) ([]*Job, error) {
	if limit <= 0 {
		return nil, nil
	}
	var from int64
	if after != "" {
		n, ok := parseJobID(after)
		if !ok {
			return nil, fmt.Errorf("list jobs: cursor %q: %w", after, ErrNotFound)
		}
		from = n
	}
	rows, err := p.pool.Query(ctx, `SELECT `+jobColumns+` FROM jobs WHERE state = $1 AND id > $2 ORDER BY id LIMIT $3`,
		string(state), from, limit)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var out []*Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

// CancelQueued implements JobAdmin. A claim that takes the job at the same
// moment wins or loses by the row lock: the job is cancelled only while it
// is still queued.
func (p *Postgres) CancelQueued(ctx context.Context, id, reason string) (*Job, error) {
	return p.adminTransition(ctx, "cancel job", id, `WITH coalesced AS (
		UPDATE jobs SET state = 'done', last_error = $2, updated_at = $3, finished_at = $3
		WHERE coalesced_into = $1 AND EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND state = 'queued'))
	UPDATE jobs SET state = 'done', last_error = $2, updated_at = $3, finished_at = $3, owner = '', lease_until = NULL
		WHERE id = $1 AND state = 'queued' RETURNING `+jobColumns, pgText(cancelledError(reason)), p.nowUTC())
}

// RequeueFailed implements JobAdmin.
func (p *Postgres) RequeueFailed(ctx context.Context, id string) (*Job, error) {
	return p.adminTransition(ctx, "requeue failed job", id, `UPDATE jobs SET state = 'queued', attempts = 0, owner = '',
		lease_until = NULL, not_before = NULL, finished_at = NULL, updated_at = $2
		WHERE id = $1 AND state = 'failed' RETURNING `+jobColumns, p.nowUTC())
}

// adminTransition runs an update of job id ($1) that returns it, or tells
// an unknown job from one in another state (ErrNotQueued).
func (p *Postgres) adminTransition(ctx context.Context, what, id, sql string, args ...any) (*Job, error) {
	n, ok := parseJobID(id)
	if !ok {
		return nil, fmt.Errorf("%s: job %q: %w", what, id, ErrNotFound)
	}
	j, err := scanJob(p.pool.QueryRow(ctx, sql, append([]any{n}, args...)...))
	if err == nil {
		return j, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var state string
	err = p.pool.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, n).Scan(&state)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("%s: job %s: %w", what, id, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return nil, fmt.Errorf("%s: job %s is %s: %w", what, id, state, ErrNotQueued)
}
