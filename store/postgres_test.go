package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/store/storetest"
)

// openPostgres opens a store on url, closed when the test ends.
func openPostgres(t testing.TB, url string, opts ...PostgresOption) *Postgres {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := OpenPostgres(ctx, url, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// The contract suite on PostgreSQL, each store in its own schema.
func TestPostgres(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	testStore(t, func(t *testing.T, clk *fakeclock.Clock) Store {
		return openPostgres(t, storetest.PostgresURL(t), WithPostgresClock(clk.Now))
	})
}

// replicas opens n stores on one fresh schema, each with its own pool, as
// n shardgate processes would, on one clock.
func replicas(t *testing.T, n int, clk *fakeclock.Clock, opts ...PostgresOption) []*Postgres {
	t.Helper()
	url := storetest.PostgresURL(t)
	out := make([]*Postgres, n)
	for i := range out {
		out[i] = openPostgres(t, url, append([]PostgresOption{WithPostgresClock(clk.Now)}, opts...)...)
	}
	return out
}

func TestPostgresReplicasNeverClaimOneJobTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rs := replicas(t, 2, fakeclock.Following())
	const jobs, workersEach = 200, 4
	for i := range jobs {
		enqueue(t, rs[i%2], fmt.Sprintf("d%d", i), "event", nil)
	}
	var mu sync.Mutex
	claimed := map[string]string{}
	var wg sync.WaitGroup
	for r, st := range rs {
		for w := range workersEach {
			owner := fmt.Sprintf("replica-%d/worker-%d", r, w)
			wg.Go(func() {
				for {
					j, err := st.Claim(ctx, owner)
					if err != nil || j == nil {
						if err != nil {
							t.Errorf("claim: %v", err)
						}
						return
					}
					mu.Lock()
					prev, twice := claimed[j.ID]
					claimed[j.ID] = owner
					mu.Unlock()
					if twice {
						t.Errorf("job %s claimed by %s and %s", j.ID, prev, owner)
					}
					if err := st.Complete(ctx, j.ID, j.Owner, nil); err != nil {
						t.Errorf("complete: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	require.Len(t, claimed, jobs)
	owners := map[string]bool{}
	for _, o := range claimed {
		owners[strings.SplitN(o, "/", 2)[0]] = true
	}
	require.Len(t, owners, 2, "both replicas claimed")
	require.Zero(t, countQueued(t, rs[0]))
}

func TestPostgresExpiredLeaseIsTakenOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = 10 * time.Second
	clk := fakeclock.New(time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)) // stands still: the lease ends exactly where the steps say
	rs := replicas(t, 2, clk, WithLease(lease))
	dead, alive := rs[0], rs[1]
	a := enqueue(t, dead, "a", "event", []byte("body a"))
	b := enqueue(t, dead, "b", "event", nil)
	got := claim(t, dead, "dead")
	require.Equal(t, a.ID, got.ID)
	require.Equal(t, clk.Now().Add(lease).UTC().Round(time.Microsecond), got.LeaseUntil)
	require.NoError(t, dead.Close()) // the replica dies holding a

	steps := []struct {
		name      string
		advance   time.Duration
		reclaimed int
	}{
		{name: "within the lease nothing is taken", advance: lease - time.Second},
		{name: "at its end neither", advance: time.Second},
		{name: "past it the job is taken over", advance: time.Millisecond, reclaimed: 1},
		{name: "once only", advance: time.Hour},
	}
	for _, st := range steps {
		clk.Advance(st.advance)
		n, err := alive.ReclaimExpired(ctx)
		require.NoError(t, err, st.name)
		require.Equal(t, st.reclaimed, n, st.name)
	}
	again := claim(t, alive, "alive")
	require.Equal(t, a.ID, again.ID, "the taken-over job keeps its place before b")
	require.Equal(t, 2, again.Attempts)
	require.Equal(t, []byte("body a"), again.Payload)
	require.Equal(t, b.ID, claim(t, alive, "alive").ID)
	require.ErrorIs(t, alive.Heartbeat(ctx, a.ID, "dead"), ErrLeaseLost)
}

func TestPostgresHeartbeatKeepsTheLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = 10 * time.Second
	clk := fakeclock.New(time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC))
	rs := replicas(t, 2, clk, WithLease(lease))
	j := enqueue(t, rs[0], "a", "event", nil)
	require.Equal(t, j.ID, claim(t, rs[0], "r0").ID)
	for range 10 { // 10 × 4 s, four times the lease, renewed every third of it
		clk.Advance(lease / 3)
		require.NoError(t, rs[0].Heartbeat(ctx, j.ID, "r0"))
		n, err := rs[1].RecoverRunning(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "a renewed lease is live: a starting replica leaves it alone")
	}
	clk.Advance(lease + time.Millisecond)
	n, err := rs[1].RecoverRunning(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "once the heartbeats stop, a starting replica takes it over")
}

func TestPostgresConcurrentDuplicateDeliveriesStoreOneJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rs := replicas(t, 2, fakeclock.Following())
	const deliveries, sends = 40, 6 // each delivery sent 6 times at once, to both replicas
	type result struct {
		delivery, id string
		err          error
	}
	results := make(chan result, deliveries*sends)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for d := range deliveries {
		for i := range sends {
			wg.Go(func() {
				<-start
				j := &Job{DeliveryID: fmt.Sprintf("delivery-%d", d), Kind: "event"}
				err := rs[i%2].Enqueue(ctx, j, 1000)
				results <- result{delivery: j.DeliveryID, id: j.ID, err: err}
			})
		}
	}
	close(start)
	wg.Wait()
	close(results)
	stored := map[string]int{}
	for r := range results {
		if errors.Is(r.err, ErrDuplicate) {
			require.Empty(t, r.id)
			continue
		}
		require.NoError(t, r.err)
		stored[r.delivery]++
	}
	require.Len(t, stored, deliveries)
	for d, n := range stored {
		require.Equal(t, 1, n, "delivery %s stored %d times", d, n)
	}
	require.Equal(t, deliveries, countQueued(t, rs[1]))
}

func TestPostgresConcurrentOpensMigrateOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	const opens = 6
	errs := make(chan error, opens)
	stores := make(chan *Postgres, opens)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range opens {
		wg.Go(func() {
			<-start
			p, err := OpenPostgres(ctx, url)
			errs <- err
			if err == nil {
				stores <- p
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	close(stores)
	for err := range errs {
		require.NoError(t, err)
	}
	for p := range stores {
		require.NoError(t, p.Ping(ctx))
		require.NoError(t, p.Close())
	}
	all, err := Migrations()
	require.NoError(t, err)
	rows, err := openPostgres(t, url).pool.Query(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	require.NoError(t, err)
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	require.Len(t, versions, len(all), "each migration recorded once")
	for i, v := range versions {
		require.Equal(t, i+1, v)
	}
	pending, err := PendingMigrations(ctx, url)
	require.NoError(t, err)
	require.Empty(t, pending)
}

// The trigger-kept queue depth matches the rows whatever mix of changes two
// replicas make at once.
func TestPostgresQueueDepthStaysExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.Following()
	rs := replicas(t, 2, clk)
	var wg sync.WaitGroup
	for g := range 8 {
		st := rs[g%2]
		wg.Go(func() {
			for i := range 40 {
				if err := st.Enqueue(ctx, &Job{DeliveryID: fmt.Sprintf("%d-%d", g, i), Kind: "x"}, 0); err != nil {
					t.Errorf("enqueue: %v", err)
					return
				}
				// Every claim follows its own enqueue, so a job is always
				// there to take; but a claim skips the rows another replica's
				// claim has locked (SKIP LOCKED) and may then come back
				// empty: it asks again.
				var j *Job
				var err error
				for try := 0; j == nil && err == nil && try < 1000; try++ {
					j, err = st.Claim(ctx, fmt.Sprintf("w%d", g))
				}
				if err != nil || j == nil {
					t.Errorf("claim: %v %v", j, err)
					return
				}
				switch i % 4 {
				case 0:
					err = st.Complete(ctx, j.ID, j.Owner, nil)
				case 1:
					err = st.Release(ctx, j.ID, j.Owner)
				case 2:
					err = st.Retry(ctx, j.ID, j.Owner, errors.New("x"), clk.Now().Add(time.Hour))
				} // 3: left running, for the takeover below
				if err != nil {
					t.Errorf("transition: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	clk.Advance(pastAnyLease)
	_, err := rs[0].ReclaimExpired(ctx)
	require.NoError(t, err)
	_, err = rs[1].PruneDone(ctx, clk.Now())
	require.NoError(t, err)
	var rows int
	require.NoError(t, rs[0].pool.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE state = 'queued'`).Scan(&rows))
	require.Greater(t, rows, 0)
	require.Equal(t, rows, countQueued(t, rs[1]))
}

// Claim alone takes over a dead replica's job once its lease expired: the
// takeover does not depend on anyone calling ReclaimExpired.
func TestPostgresClaimTakesOverExpiredLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = 10 * time.Second
	clk := fakeclock.New(time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC))
	rs := replicas(t, 2, clk, WithLease(lease))
	dead, alive := rs[0], rs[1]
	a := enqueue(t, dead, "a", "event", nil)
	b := enqueue(t, dead, "b", "event", nil)
	require.Equal(t, a.ID, claim(t, dead, "dead").ID)
	require.NoError(t, dead.Close())

	require.Equal(t, b.ID, claim(t, alive, "alive").ID, "a live lease is left alone")
	require.Nil(t, claim(t, alive, "alive"))
	clk.Advance(lease + time.Millisecond)
	got := claim(t, alive, "alive")
	require.NotNil(t, got, "the expired job is claimable")
	require.Equal(t, a.ID, got.ID)
	require.Equal(t, 2, got.Attempts)
	require.ErrorIs(t, alive.Heartbeat(ctx, a.ID, "dead"), ErrLeaseLost)
}

// Room reserved by a replica still on reserve_enqueue (a rolling upgrade)
// is counted against the limit until the reservation expires, never
// longer; a redelivery is refused as a duplicate before any limit.
func TestPostgresReservationsOfOlderReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const ttl = time.Minute // reserve_enqueue's, in the replicas before 0003
	clk := fakeclock.New(time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC))
	p := replicas(t, 1, clk)[0]
	enqueue(t, p, "a", "event", nil)
	_, err := p.pool.Exec(ctx, `INSERT INTO queue_reservations (expires_at) VALUES ($1)`, clk.Now().Add(ttl))
	require.NoError(t, err)
	require.ErrorIs(t, p.Enqueue(ctx, &Job{DeliveryID: "b", Kind: "event"}, 2), ErrQueueFull)
	require.ErrorIs(t, p.Enqueue(ctx, &Job{DeliveryID: "a", Kind: "event"}, 2), ErrDuplicate,
		"a redelivery is a duplicate before it is one too many")
	clk.Advance(ttl)
	require.NoError(t, p.Enqueue(ctx, &Job{DeliveryID: "b", Kind: "event"}, 2))
	require.Equal(t, 2, countQueued(t, p))
}

// Enqueues that arrive together share one transaction (one commit), and
// each returns only once that transaction has committed; a delivery twice
// in one batch is stored once.
func TestPostgresEnqueuesShareACommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	p := openPostgres(t, url)
	// A session holding the enqueue lock keeps every batch with a limit
	// from committing.
	other, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `BEGIN; SELECT pg_advisory_xact_lock(hashtext('shardgate:' || current_schema()), 2)`)
	require.NoError(t, err)

	const n = 60
	errs := make(chan error, n)
	var returned atomic.Int64
	for i := range n {
		id := fmt.Sprintf("d-%d", i)
		if i == n-1 {
			id = "d-5" // the same delivery again, in the same batch
		}
		go func() {
			errs <- p.Enqueue(ctx, &Job{DeliveryID: id, Kind: "event"}, 1000)
			returned.Add(1)
		}()
	}
	// One batch per committer waits on the lock; the rest wait for them.
	require.Eventually(t, func() bool { return len(p.enqueues) == n-enqueueCommitters }, 10*time.Second, time.Millisecond)
	require.Zero(t, returned.Load(), "no enqueue returns before its commit")
	_, err = conn.Exec(ctx, `COMMIT`)
	require.NoError(t, err)
	dups := 0
	for range n {
		if err := <-errs; errors.Is(err, ErrDuplicate) {
			dups++
		} else {
			require.NoError(t, err)
		}
	}
	require.Equal(t, 1, dups, "d-5 is stored once")
	require.Equal(t, n-1, countQueued(t, p))
	var commits int
	require.NoError(t, p.pool.QueryRow(ctx, `SELECT count(DISTINCT xmin::text) FROM jobs`).Scan(&commits))
	require.LessOrEqual(t, commits, 2*enqueueCommitters, "%d jobs in %d transactions", n-1, commits)
	var reservations int
	require.NoError(t, p.pool.QueryRow(ctx, `SELECT count(*) FROM queue_reservations`).Scan(&reservations))
	require.Zero(t, reservations, "every reservation became a job or was given back")
}

// The queue limit is exact across replicas: two pools enqueueing at once
// store exactly the limit, however their reservations and inserts interleave.
func TestPostgresQueueLimitAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rs := replicas(t, 2, fakeclock.Following())
	const goroutines, each, limit = 16, 25, 100
	var accepted, full atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				err := rs[g%2].Enqueue(ctx, &Job{DeliveryID: fmt.Sprintf("%d-%d", g, i), Kind: "x", Payload: []byte("body")}, limit)
				switch {
				case err == nil:
					accepted.Add(1)
				case errors.Is(err, ErrQueueFull):
					full.Add(1)
				default:
					t.Errorf("enqueue: %v", err)
				}
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, limit, accepted.Load())
	require.EqualValues(t, goroutines*each-limit, full.Load())
	require.Equal(t, limit, countQueued(t, rs[0]))
	var reservations int
	require.NoError(t, rs[0].pool.QueryRow(ctx, `SELECT count(*) FROM queue_reservations`).Scan(&reservations))
	require.Zero(t, reservations, "every reservation became a job or was given back")
}
