package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The claim (see Store.Claim) takes the fairest due job and coalesces its
// duplicates into it, in one statement: claimFastSQL, or claimWideSQL when
// that found nothing. Their candidates are the rows of claim_heads
// (migration 0008), kept by a trigger in the transaction of every change to
// a job: each queued job without a lane, and of each lane the oldest queued
// job while the lane runs nothing. No candidate is tested against its lane
// and no walk of the queue is made: a claim reads O(installations · log n)
// index pages. The candidates are ordered by priority, then by how many
// jobs their installation runs (claim_busy), then by age; installation 0
// (no identity) counts as running none. Each one in that order is then
// looked up by id and locked (a lateral probe, so no plan can join the
// candidates to the whole queue) until one is still queued and due and not
// locked by another claim: replicas claim side by side, SKIP LOCKED passing
// over the candidate another claim is taking. The trigger checks, under the
// lane's row lock, that a job claimed from a lane is still the lane's head
// (SGC01 otherwise, and Claim claims again), so a lane changed after the
// claim's snapshot never runs two jobs. The duplicates are found through
// jobs_queued_coalesce.
//
// Both return the claimed job first, then every job coalesced into it: the
// ones it finishes now and those of an earlier claim.

// claimFastSQL's candidates are each installation's best due head (highest
// priority, then oldest): one step of a loose scan of claim_heads_pick per
// installation. It finds nothing only when the queue has nothing due or
// when other claims hold every installation's best.
const claimFastSQL = `WITH RECURSIVE best(installation, id, priority) AS (
		(SELECT installation, id, priority FROM claim_heads
			WHERE not_before IS NULL OR not_before <= $1
			ORDER BY installation, priority DESC, id LIMIT 1)
		UNION ALL
		SELECT n.installation, n.id, n.priority FROM best
		CROSS JOIN LATERAL (
			SELECT h.installation, h.id, h.priority FROM claim_heads h
			WHERE h.installation > best.installation AND (h.not_before IS NULL OR h.not_before <= $1)
			ORDER BY h.installation, h.priority DESC, h.id LIMIT 1
		) n
	), cand AS (
		SELECT best.id, best.priority, CASE WHEN best.installation = 0 THEN 0 ELSE coalesce(b.n, 0) END AS n
		FROM best LEFT JOIN claim_busy b ON b.installation = best.installation
	)` + claimTailSQL

// claimWideSQL's candidates are each installation's best $4 due heads (all
// of them when $4 is NULL): a loose scan of claim_heads_pick finds the
// installations, and one short range of it per installation their heads.
const claimWideSQL = `WITH RECURSIVE inst(installation) AS (
		(SELECT installation FROM claim_heads ORDER BY installation LIMIT 1)
		UNION ALL
		SELECT (SELECT h.installation FROM claim_heads h WHERE h.installation > inst.installation
			ORDER BY h.installation LIMIT 1)
		FROM inst WHERE inst.installation IS NOT NULL
	), cand AS (
		SELECT c.id, c.priority, CASE WHEN inst.installation = 0 THEN 0 ELSE coalesce(b.n, 0) END AS n
		FROM inst
		CROSS JOIN LATERAL (
			SELECT h.id, h.priority FROM claim_heads h
			WHERE h.installation = inst.installation AND (h.not_before IS NULL OR h.not_before <= $1)
			ORDER BY h.priority DESC, h.id LIMIT $4
		) c
		LEFT JOIN claim_busy b ON b.installation = inst.installation
		WHERE inst.installation IS NOT NULL
	)` + claimTailSQL

// claimTailSQL picks from cand, claims and coalesces.
const claimTailSQL = `, pick AS (
		SELECT j.id FROM (SELECT * FROM cand ORDER BY priority DESC, n, id) o
		CROSS JOIN LATERAL (
			SELECT j.id FROM jobs j
			WHERE j.id = o.id AND j.state = 'queued' AND (j.not_before IS NULL OR j.not_before <= $1)
			FOR UPDATE SKIP LOCKED
		) j
		LIMIT 1
	), claimed AS (
		UPDATE jobs SET state = 'running', owner = $2, attempts = attempts + 1, updated_at = $1, lease_until = $3
		WHERE id = (SELECT id FROM pick) AND state = 'queued'
		RETURNING *
	), twins AS (
		SELECT q.id, c.id AS into_id FROM claimed c
		JOIN jobs q ON q.coalesce_key = c.coalesce_key AND q.state = 'queued' AND q.coalesce_key <> ''
		WHERE q.id <> c.id AND q.attempts = 0 AND (q.not_before IS NULL OR q.not_before <= $1)
	), dups AS (
		UPDATE jobs d SET state = 'done', updated_at = $1, finished_at = $1, coalesced_into = t.into_id, last_error = ''
		FROM twins t
		WHERE d.id = t.id AND d.state = 'queued'
		RETURNING d.*
	)
	SELECT ` + jobColumns + ` FROM (
		SELECT 0 AS claim_rank, * FROM claimed
		UNION ALL SELECT 1, * FROM dups
		UNION ALL SELECT 1, * FROM jobs WHERE coalesced_into = (SELECT id FROM claimed)
	) u ORDER BY claim_rank, id`

// claimWidth is how many heads per installation the second try considers:
// enough that claims running side by side, each passing over the rows the
// others locked, still find one. A claim that finds none among them looks
// at every head before it says the queue has nothing due.
const claimWidth = 4

// claimAttempts bounds the claims made again after one was refused: its
// lane's head moved under it (SGC01), or a deadlock with another
// transaction on the lanes' rows was broken by aborting it.
const claimAttempts = 8

// Claim takes the fairest due queued job and the jobs coalesced into it
// (see Store), in one statement: claimFastSQL, then, if it found nothing,
// claimWideSQL with claimWidth heads per installation, then with all.
//
// It first takes over expired leases, at most every quarter lease: a dead
// replica's jobs come back even if no one calls ReclaimExpired, and before
// younger jobs, since they keep their ids.
func (p *Postgres) Claim(ctx context.Context, owner string) (*Job, error) {
	now := p.nowUTC()
	if last := p.lastReclaim.Load(); last == 0 || now.Sub(time.Unix(0, last)) >= p.lease/4 {
		p.lastReclaim.Store(now.UnixNano())
		if _, err := p.ReclaimExpired(ctx); err != nil {
			return nil, fmt.Errorf("claim job: %w", err)
		}
	}
	width := int64(claimWidth)
	tries := []struct {
		sql  string
		args []any
	}{
		{claimFastSQL, nil},
		{claimWideSQL, []any{&width}},
		{claimWideSQL, []any{nil}}, // LIMIT NULL: every head
	}
	for try, attempt := 0, 1; ; attempt++ {
		j, err := p.claimOnce(ctx, tries[try].sql, append([]any{now, pgText(owner), now.Add(p.lease)}, tries[try].args...))
		switch {
		case err != nil && attempt < claimAttempts && (isTxConflict(err) || isClaimLost(err)):
			continue
		case err != nil:
			return nil, fmt.Errorf("claim job: %w", err)
		case j == nil && try+1 < len(tries):
			try++
			continue
		case j != nil:
			p.noteClaim()
		}
		return j, nil
	}
}

// isClaimLost says the claim's job was no longer its lane's head (SGC01,
// raised by claim_lane_refresh).
func isClaimLost(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "SGC01"
}

// claimOnce runs one claim statement.
func (p *Postgres) claimOnce(ctx context.Context, sql string, args []any) (*Job, error) {
	rows, err := p.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var claimed *Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		if claimed == nil {
			claimed = j
			continue
		}
		claimed.Coalesced = append(claimed.Coalesced, j)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return claimed, nil
}

// claimVacuumEvery is how many claims a store makes between two vacuums of
// the claim's tables.
const claimVacuumEvery = 1000

// claimVacuumSQL vacuums the claim's tables: a claim deletes its job's row
// of claim_heads and a completion adds the lane's next, so a drain leaves a
// dead entry of claim_heads_pick per job, in front of the live ones of its
// installation, where every claim's scans step over them. Autovacuum may be
// slow to come, or off; these tables hold about a row per busy pull request,
// so vacuuming them costs milliseconds. jobs too: the lane probes of the
// claim's trigger (jobs_lane, jobs_lane_running) and the coalescing step read
// partial indexes of queued and running jobs, where every finished job leaves
// a dead entry; without it, on a server with autovacuum off, a claim at the
// end of a 100,000-job drain took 1.7–2.7× one at its start, with it 1.36×
// (INDEX_CLEANUP ON: PostgreSQL would otherwise skip the indexes while few
// heap pages hold dead rows, and the dead entries are in the indexes). The
// heap pass reads only the pages changed since the last vacuum (visibility
// map). SKIP_LOCKED: a vacuum already running (another replica's,
// autovacuum's) is not waited for.
const claimVacuumSQL = `VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON) claim_heads, claim_lanes, claim_busy, jobs`

// noteClaim counts a claim and, every vacuumEvery (claimVacuumEvery), vacuums the claim's
// tables in the background, one vacuum at a time. A vacuum that fails (a
// role that does not own the tables is only warned) changes nothing: it is
// upkeep, not correctness.
func (p *Postgres) noteClaim() {
	every := p.vacuumEvery
	if every <= 0 {
		every = claimVacuumEvery
	}
	if p.claims.Add(1)%every != 0 {
		return
	}
	p.vacuumMu.Lock()
	defer p.vacuumMu.Unlock()
	if p.vacuuming || p.closed {
		return
	}
	p.vacuuming = true
	p.vacuums.Add(1)
	go func() {
		defer p.vacuums.Done()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = p.pool.Exec(ctx, claimVacuumSQL, pgx.QueryExecModeSimpleProtocol)
		p.vacuumMu.Lock()
		p.vacuuming = false
		p.vacuumMu.Unlock()
	}()
}
