package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

// claimTables reads the claim's derived tables (migration 0008) and what
// they should hold, worked out from the jobs alone, as comparable lines.
func claimTables(t *testing.T, p *Postgres) (got, want []string) {
	t.Helper()
	ctx := context.Background()
	lines := func(sql string) []string {
		rows, err := p.pool.Query(ctx, sql)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	got = lines(`SELECT line FROM (
		SELECT 'head ' || id || ' ' || installation || ' ' || priority || ' ' || coalesce(not_before::text, '-') AS line FROM claim_heads
		UNION ALL SELECT 'lane ' || lane || ' ' || coalesce(head::text, '-') FROM claim_lanes
		UNION ALL SELECT 'busy ' || installation || ' ' || n FROM claim_busy WHERE n <> 0) l ORDER BY line`)
	want = lines(`WITH live AS (SELECT * FROM jobs WHERE state IN ('queued', 'running')),
	lane_head AS (
		SELECT lane, (SELECT min(id) FROM live q WHERE q.lane = l.lane AND q.state = 'queued') AS head
		FROM (SELECT DISTINCT lane FROM live WHERE lane <> '') l
		WHERE NOT EXISTS (SELECT 1 FROM live r WHERE r.lane = l.lane AND r.state = 'running')
		UNION ALL
		SELECT DISTINCT lane, NULL::bigint FROM live r WHERE lane <> '' AND state = 'running'
	), heads AS (
		SELECT id FROM live WHERE lane = '' AND state = 'queued'
		UNION ALL SELECT head FROM lane_head WHERE head IS NOT NULL
	)
	SELECT line FROM (
		SELECT 'head ' || j.id || ' ' || j.installation || ' ' || j.priority || ' ' || coalesce(j.not_before::text, '-') AS line
		FROM heads JOIN jobs j ON j.id = heads.id
		UNION ALL SELECT 'lane ' || lane || ' ' || coalesce(head::text, '-') FROM lane_head
		UNION ALL SELECT 'busy ' || installation || ' ' || count(*) FROM live
			WHERE state = 'running' AND installation <> 0 GROUP BY installation) l ORDER BY line`)
	return got, want
}

// The claim's derived tables match the jobs whatever mix of changes two
// replicas make at once on a few lanes (enqueues, claims, completions,
// failures, releases, retries, postponements, cancellations, takeovers,
// requeues of failed jobs, pruning), and no lane is left unclaimable: the
// queue drains to nothing afterwards.
func TestPostgresClaimTablesStayExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.Following()
	rs := replicas(t, 2, clk)
	lanes := []string{"o/a#1", "o/a#2", "o/b#1", "", "o/c#9"}
	var wg sync.WaitGroup
	for g := range 8 {
		st := rs[g%2]
		wg.Go(func() {
			for i := range 30 {
				j := &Job{DeliveryID: fmt.Sprintf("%d-%d", g, i), Kind: "x",
					Installation: int64((g + i) % 3), Lane: lanes[(g*7+i)%len(lanes)], Priority: i % 7 / 6}
				if err := st.Enqueue(ctx, j, 0); err != nil {
					t.Errorf("enqueue: %v", err)
					return
				}
				if i%9 == 4 {
					if _, err := st.CancelQueued(ctx, j.ID, "test"); err != nil && !errors.Is(err, ErrNotQueued) {
						t.Errorf("cancel: %v", err)
						return
					}
				}
				c, err := st.Claim(ctx, fmt.Sprintf("w%d", g))
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if c == nil {
					continue // every lane busy or waiting: not an error
				}
				switch i % 6 {
				case 0:
					err = st.Complete(ctx, c.ID, c.Owner, nil)
				case 1:
					err = st.Complete(ctx, c.ID, c.Owner, errors.New("failed"))
				case 2:
					err = st.Release(ctx, c.ID, c.Owner)
				case 3:
					err = st.Retry(ctx, c.ID, c.Owner, errors.New("x"), clk.Now().Add(time.Hour))
				case 4:
					err = st.Postpone(ctx, c.ID, c.Owner, errors.New("y"), clk.Now())
				} // 5: left running, for the takeover below
				if err != nil {
					t.Errorf("transition: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, want := claimTables(t, rs[0])
	require.Equal(t, want, got, "after the mix")

	failed, err := rs[1].JobsByState(ctx, JobFailed, "", 1000)
	require.NoError(t, err)
	require.NotEmpty(t, failed)
	for _, f := range failed {
		_, err := rs[1].RequeueFailed(ctx, f.ID)
		require.NoError(t, err)
	}
	clk.Advance(pastAnyLease + 2*time.Hour) // every lease expired, every retry due
	_, err = rs[0].ReclaimExpired(ctx)
	require.NoError(t, err)
	_, err = rs[1].PruneDone(ctx, clk.Now())
	require.NoError(t, err)
	got, want = claimTables(t, rs[0])
	require.Equal(t, want, got, "after takeover, requeues and pruning")

	for n := 0; ; n++ {
		require.Less(t, n, 1000, "the queue drains")
		c := claim(t, rs[n%2], "drain")
		if c == nil {
			break
		}
		require.NoError(t, rs[n%2].Complete(ctx, c.ID, c.Owner, nil))
	}
	require.Zero(t, countQueued(t, rs[0]), "no lane is left without its head")
	got, want = claimTables(t, rs[0])
	require.Equal(t, want, got, "after the drain")
	require.Empty(t, got)
}

// A store migrated from 0007 with jobs in flight derives its claim tables
// from them (the fill at the end of 0008), and claims as before.
func TestPostgresClaimTablesFilledAtMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
	p := replicas(t, 1, clk)[0]
	enqueueFor(t, p, "x1", 1, "o/a#1", "")
	enqueueFor(t, p, "x2", 1, "o/a#1", "")
	enqueueFor(t, p, "y1", 2, "o/a#2", "")
	enqueue(t, p, "plain", "event", nil)
	x1 := claim(t, p, "w")
	require.Equal(t, "x1", x1.DeliveryID)
	// As a database 0007 left: no derived rows, no trigger; then 0008's fill.
	all, err := Migrations()
	require.NoError(t, err)
	fill := all[7].SQL[strings.Index(all[7].SQL, "LOCK TABLE jobs"):]
	_, err = p.pool.Exec(ctx, `TRUNCATE claim_heads, claim_lanes, claim_busy`)
	require.NoError(t, err)
	tx, err := p.pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, fill)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	got, want := claimTables(t, p)
	require.Equal(t, want, got)
	require.Len(t, got, 5, "two heads (y1, plain), two lanes, one busy installation")
	require.Equal(t, "y1", claimedDelivery(t, p, "w2"), "installation 2 runs nothing")
	require.Equal(t, "plain", claimedDelivery(t, p, "w3"))
	require.Empty(t, claimedDelivery(t, p, "w4"), "x2 waits for x1")
}

// Every vacuumEvery claims a store vacuums the claim's tables itself, in the
// background (autovacuum may be off, as on the test server): Close waits
// for it.
func TestPostgresClaimVacuumsItsTables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rs := replicas(t, 2, fakeclock.Following())
	vacuums := func() (n int) {
		// claim_heads' and jobs' (whose partial indexes the trigger probes).
		require.NoError(t, rs[1].pool.QueryRow(ctx,
			`SELECT sum(vacuum_count) FROM pg_stat_user_tables WHERE relid IN ('claim_heads'::regclass, 'jobs'::regclass)`).Scan(&n))
		return n
	}
	before := vacuums()
	rs[0].vacuumEvery = 3
	for i := range 3 {
		enqueueFor(t, rs[0], fmt.Sprintf("d%d", i), 1, fmt.Sprintf("o/a#%d", i), "")
		require.NotNil(t, claim(t, rs[0], "w"))
	}
	require.NoError(t, rs[0].Close())
	require.Equal(t, before+2, vacuums())
}
