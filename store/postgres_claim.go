package store

import (
	"context"
	"fmt"
	"time"
)

// claimSQL claims the fairest due job (see Store.Claim) and coalesces its
// duplicates into it, in one statement. It visits each installation with
// queued jobs (a loose scan of jobs_queued_installation), takes its oldest
// due job of the highest priority whose lane runs nothing (a probe of
// jobs_lane_running) and has nothing older queued (a range probe of
// jobs_lane below its id: neither walks the lane's queued jobs), and orders
// those by priority,
// then by how many jobs their installation runs, then by age; installation 0
// (no identity) counts as running none.
// The duplicates are found through jobs_queued_coalesce.
//
// Replicas claim side by side: each candidate is locked with SKIP LOCKED,
// so a claim passes over the one another claim is taking. A lane's next job
// cannot be taken beside it: in any snapshot only the oldest queued job of
// a lane is a candidate, and once taken it is running (or locked).
//
// It returns the claimed job first, then every job coalesced into it: the
// ones it finishes now and those of an earlier claim.
const claimSQL = `WITH RECURSIVE inst(installation) AS (
		(SELECT installation FROM jobs WHERE state = 'queued' ORDER BY installation LIMIT 1)
		UNION ALL
		SELECT (SELECT j.installation FROM jobs j WHERE j.state = 'queued' AND j.installation > inst.installation
			ORDER BY j.installation LIMIT 1)
		FROM inst WHERE inst.installation IS NOT NULL
	), busy AS (
		SELECT installation, count(*) AS n FROM jobs WHERE state = 'running' AND installation <> 0 GROUP BY installation
	), pick AS (
		SELECT c.id FROM inst
		CROSS JOIN LATERAL (
			SELECT j.id, j.priority FROM jobs j
			WHERE j.state = 'queued' AND j.installation = inst.installation
				AND (j.not_before IS NULL OR j.not_before <= $1)
				AND (j.lane = '' OR NOT EXISTS (SELECT 1 FROM jobs o
					WHERE o.lane = j.lane AND o.lane <> '' AND o.state IN ('queued', 'running') AND o.id < j.id)
					AND NOT EXISTS (SELECT 1 FROM jobs r
					WHERE r.lane = j.lane AND r.lane <> '' AND r.state = 'running'))
			ORDER BY j.priority DESC, j.id LIMIT 1
			FOR UPDATE SKIP LOCKED
		) c
		LEFT JOIN busy ON busy.installation = inst.installation AND inst.installation <> 0
		WHERE inst.installation IS NOT NULL
		ORDER BY c.priority DESC, coalesce(busy.n, 0), c.id
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

// Claim takes the fairest due queued job and the jobs coalesced into it
// (see Store), in one statement (claimSQL).
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
	rows, err := p.pool.Query(ctx, claimSQL, now, pgText(owner), now.Add(p.lease))
	if err != nil {
		return nil, fmt.Errorf("claim job: %w", err)
	}
	defer rows.Close()
	var claimed *Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("claim job: %w", err)
		}
		if claimed == nil {
			claimed = j
			continue
		}
		claimed.Coalesced = append(claimed.Coalesced, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim job: %w", err)
	}
	return claimed, nil
}
