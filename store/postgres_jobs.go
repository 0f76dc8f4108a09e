package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// jobColumns is what scanJob reads, in order.
const jobColumns = `id, coalesce(delivery_id, ''), kind, event, payload, state, attempts, last_error,
	not_before, owner, lease_until, created_at, updated_at, installation, lane, coalesce_key, coalesced_into, priority`

func scanJob(row pgx.Row) (*Job, error) {
	var (
		j                 Job
		id                int64
		state             string
		payload           []byte
		notBefore, leased *time.Time
		into              *int64
		priority          int16
	)
	if err := row.Scan(&id, &j.DeliveryID, &j.Kind, &j.Event, &payload, &state, &j.Attempts, &j.LastError,
		&notBefore, &j.Owner, &leased, &j.CreatedAt, &j.UpdatedAt,
		&j.Installation, &j.Lane, &j.CoalesceKey, &into, &priority); err != nil {
		return nil, err
	}
	if into != nil {
		j.CoalescedInto = jobKey(uint64(*into))
	}
	j.ID, j.State, j.Priority = jobKey(uint64(id)), JobState(state), int(priority)
	if len(payload) > 0 {
		j.Payload = payload
	}
	if notBefore != nil {
		j.NotBefore = notBefore.UTC()
	}
	if leased != nil {
		j.LeaseUntil = leased.UTC()
	}
	j.CreatedAt, j.UpdatedAt = j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	return &j, nil
}

// parseJobID reads an id that jobKey wrote; anything else names no job.
func parseJobID(id string) (int64, bool) {
	if len(id) != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(id, 10, 64)
	return n, err == nil && n > 0
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// queueDepthSQL reads the depth the jobs_count_queued trigger keeps.
const queueDepthSQL = `SELECT coalesce(sum(n), 0) FROM queue_depth`

// Complete finishes a job running for owner (see Store).
func (p *Postgres) Complete(ctx context.Context, id, owner string, jobErr error) error {
	state, msg := JobDone, ""
	if jobErr != nil {
		state, msg = JobFailed, pgText(jobErr.Error())
	}
	now := p.nowUTC()
	// The jobs coalesced into it (finished at its claim) end as it does; the
	// statement's row count stays the job's own (transition reads it).
	return p.transition(ctx, "complete job", id, owner, `WITH coalesced AS (
		UPDATE jobs SET state = $3, last_error = $4, updated_at = $5, finished_at = $5
		WHERE coalesced_into = $1 AND EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND state = 'running' AND owner = $2))
	UPDATE jobs SET state = $3, last_error = $4, updated_at = $5,
		finished_at = $5, lease_until = NULL WHERE id = $1 AND state = 'running' AND owner = $2`, string(state), msg, now)
}

// Release hands a job running for owner back with its place (see Store).
func (p *Postgres) Release(ctx context.Context, id, owner string) error {
	return p.transition(ctx, "release job", id, owner, `UPDATE jobs SET state = 'queued', owner = '', lease_until = NULL,
		updated_at = $3 WHERE id = $1 AND state = 'running' AND owner = $2`, p.nowUTC())
}

// Retry hands a job running for owner back until notBefore (see Store).
func (p *Postgres) Retry(ctx context.Context, id, owner string, jobErr error, notBefore time.Time) error {
	var msg *string
	if jobErr != nil {
		msg = nullable(pgText(jobErr.Error()))
	}
	return p.transition(ctx, "retry job", id, owner, `UPDATE jobs SET state = 'queued', owner = '', lease_until = NULL,
		updated_at = $3, not_before = $4, last_error = coalesce($5, last_error)
		WHERE id = $1 AND state = 'running' AND owner = $2`,
		p.nowUTC(), notBefore.UTC().Round(time.Microsecond), msg)
}

// Postpone hands a job running for owner back until notBefore, its claim
// uncounted (see Store).
func (p *Postgres) Postpone(ctx context.Context, id, owner string, reason error, notBefore time.Time) error {
	var msg *string
	if reason != nil {
		msg = nullable(pgText(reason.Error()))
	}
	return p.transition(ctx, "postpone job", id, owner, `UPDATE jobs SET state = 'queued', owner = '', lease_until = NULL,
		updated_at = $3, not_before = $4, last_error = coalesce($5, last_error), attempts = greatest(attempts - 1, 0)
		WHERE id = $1 AND state = 'running' AND owner = $2`,
		p.nowUTC(), notBefore.UTC().Round(time.Microsecond), msg)
}

// transition runs an update of one job running for owner ($1 is its id, $2
// the owner) and, when nothing matched, tells an unknown job from one in
// another state or held by another owner.
func (p *Postgres) transition(ctx context.Context, what, id, owner, sql string, args ...any) error {
	n, ok := parseJobID(id)
	if !ok {
		return fmt.Errorf("%s: job %q: %w", what, id, ErrNotFound)
	}
	tag, err := p.pool.Exec(ctx, sql, append([]any{n, pgText(owner)}, args...)...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	return p.unmatched(ctx, what, id, n, ErrNotRunning)
}

// unmatched says why an update of job n for an owner matched no row: the job
// is unknown, running for another owner (ErrLeaseLost), or in another state
// (notRunning).
func (p *Postgres) unmatched(ctx context.Context, what, id string, n int64, notRunning error) error {
	var state, holder string
	err := p.pool.QueryRow(ctx, `SELECT state, owner FROM jobs WHERE id = $1`, n).Scan(&state, &holder)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%s: job %s: %w", what, id, ErrNotFound)
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case state == string(JobRunning):
		return fmt.Errorf("%s: job %s is running for %q: %w", what, id, holder, ErrLeaseLost)
	default:
		return fmt.Errorf("%s: job %s is %s: %w", what, id, state, notRunning)
	}
}

// Heartbeat renews the lease of a job running for owner (see Store). A lease
// that expired but was not yet taken over is renewed: nobody else has it.
func (p *Postgres) Heartbeat(ctx context.Context, id, owner string) error {
	n, ok := parseJobID(id)
	if !ok {
		return fmt.Errorf("heartbeat job: job %q: %w", id, ErrNotFound)
	}
	tag, err := p.pool.Exec(ctx, `UPDATE jobs SET lease_until = $3 WHERE id = $1 AND state = 'running' AND owner = $2`,
		n, pgText(owner), p.nowUTC().Add(p.lease))
	if err != nil {
		return fmt.Errorf("heartbeat job: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	// A job no longer running has no lease to renew: lost, as to another owner.
	return p.unmatched(ctx, "heartbeat job", id, n, ErrLeaseLost)
}

// ReclaimExpired requeues the jobs whose lease expired (see Store). They keep
// their ids, so they are claimed again before younger jobs.
func (p *Postgres) ReclaimExpired(ctx context.Context) (int, error) {
	tag, err := p.pool.Exec(ctx, `UPDATE jobs SET state = 'queued', owner = '', lease_until = NULL, updated_at = $1
		WHERE state = 'running' AND lease_until < $1`, p.nowUTC())
	if err != nil {
		return 0, fmt.Errorf("reclaim expired jobs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// RecoverRunning is ReclaimExpired (see Store): at start, the jobs of other
// replicas may be live, and this process's own earlier jobs are told from
// theirs only by their expired leases.
func (p *Postgres) RecoverRunning(ctx context.Context) (int, error) {
	n, err := p.ReclaimExpired(ctx)
	if err != nil {
		return 0, fmt.Errorf("recover running jobs: %w", err)
	}
	return n, nil
}

// CountQueued is the number of queued jobs, waiting retries included.
func (p *Postgres) CountQueued(ctx context.Context) (int, error) {
	var n int
	if err := p.pool.QueryRow(ctx, queueDepthSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("count queued jobs: %w", err)
	}
	return n, nil
}

// GetJob returns one job with its payload.
func (p *Postgres) GetJob(ctx context.Context, id string) (*Job, error) {
	n, ok := parseJobID(id)
	if !ok {
		return nil, fmt.Errorf("get job: job %q: %w", id, ErrNotFound)
	}
	j, err := scanJob(p.pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, n))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("get job: job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get job: %w", err)
	}
	return j, nil
}

// FailingJobs implements Store. The two halves read the partial indexes of
// queued and finished jobs (and the few running ones).
func (p *Postgres) FailingJobs(ctx context.Context, since time.Time, n int) ([]*Job, error) {
	rows, err := p.pool.Query(ctx, `SELECT `+jobColumns+` FROM (
		(SELECT * FROM jobs WHERE state IN ('queued', 'running') AND last_error <> '' ORDER BY updated_at DESC LIMIT $2)
		UNION ALL
		(SELECT * FROM jobs WHERE state IN ('done', 'failed') AND finished_at >= $1 AND state = 'failed' ORDER BY finished_at DESC LIMIT $2)
	) failing ORDER BY updated_at DESC, id DESC LIMIT $2`, since.UTC(), n)
	if err != nil {
		return nil, fmt.Errorf("list failing jobs: %w", err)
	}
	defer rows.Close()
	var out []*Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list failing jobs: %w", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list failing jobs: %w", err)
	}
	return out, nil
}

// PruneDone deletes finished jobs older than olderThan, pruneChunk at a time
// (see Store). Replicas pruning at once skip each other's rows.
func (p *Postgres) PruneDone(ctx context.Context, olderThan time.Time) (int, error) {
	if !olderThan.After(time.Unix(0, 0)) {
		return 0, nil // as on Bolt: nothing finished before the epoch
	}
	total := 0
	for {
		tag, err := p.pool.Exec(ctx, `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs
			WHERE state IN ('done', 'failed') AND finished_at < $1
			ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, olderThan.UTC(), pruneChunk)
		if err != nil {
			return total, fmt.Errorf("prune finished jobs: %w", err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < pruneChunk {
			return total, nil
		}
	}
}
