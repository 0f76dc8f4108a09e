package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	// DefaultLease is how long a claim on Postgres lasts without a
	// Heartbeat: the time a dead replica's jobs wait before another takes
	// them over. Workers renew at a third of it.
	DefaultLease = 30 * time.Second
	// DefaultPostgresConns is a replica's pool size unless the URL sets
	// pool_max_conns: intake handlers each hold a connection while their
	// delivery commits, so pgx's default (4 on a small host) would queue
	// them behind each other and the workers.
	DefaultPostgresConns = 16
	// maxClockSkewShare bounds how far this host's clock may be from the
	// database's, as a share of the lease: leases are written by one
	// replica's clock and judged expired by another's.
	maxClockSkewShare = 4
)

// Postgres is the Store shared by several replicas through one PostgreSQL
// database (one schema: the first of the URL's search_path). Its schema is
// migrated at open (see Migrations).
//
// Times (leases, retries, finish times for PruneDone) come from this
// process's clock, so replicas' clocks must agree to well within the lease
// (NTP); OpenPostgres refuses a clock more than a quarter of the lease away
// from the database's.
type Postgres struct {
	pool      *pgxpool.Pool
	now       func() time.Time
	lease     time.Duration
	skewCheck bool
	closeOnce sync.Once
	// lastReclaim is when Claim last took over expired leases (UnixNano).
	lastReclaim atomic.Int64
	// claims counts this store's claims; every vacuumEvery of them
	// (claimVacuumEvery) it vacuums the claim's tables (postgres_claim.go).
	claims      atomic.Int64
	vacuumEvery int64
	vacuumMu    sync.Mutex
	vacuuming   bool // a vacuum is running; under vacuumMu
	closed      bool // Close began: no vacuum starts; under vacuumMu
	vacuums     sync.WaitGroup

	// enqueues feeds the committers (postgres_enqueue.go); quit ends them.
	enqueues   chan *enqueueRequest
	quit       chan struct{}
	committers sync.WaitGroup
}

var _ Store = (*Postgres)(nil)

// PostgresOption tunes OpenPostgres.
type PostgresOption func(*Postgres)

// WithLease sets how long a claim lasts without a Heartbeat (DefaultLease).
func WithLease(d time.Duration) PostgresOption {
	return func(p *Postgres) {
		if d > 0 {
			p.lease = d
		}
	}
}

// WithPostgresClock replaces time.Now (tests of leases and PruneDone); the
// clock is then not compared with the database's.
func WithPostgresClock(now func() time.Time) PostgresOption {
	return func(p *Postgres) { p.now, p.skewCheck = now, false }
}

// OpenPostgres connects to the database at url (postgres://… or key=value;
// pool settings such as pool_max_conns and a search_path may be given in
// it), migrates its schema and checks the clock. The URL is a secret: no
// error carries it.
func OpenPostgres(ctx context.Context, url string, opts ...PostgresOption) (*Postgres, error) {
	p := &Postgres{now: time.Now, lease: DefaultLease, skewCheck: true}
	for _, o := range opts {
		o(p)
	}
	pool, err := connectPostgres(ctx, url)
	if err != nil {
		return nil, err
	}
	p.pool = pool
	if p.skewCheck {
		// The host's real clock against the database's: replicas' leases
		// compare the hosts' clocks, whatever clock a test gives the store.
		if err := checkClockSkew(ctx, pool, time.Now, p.lease/maxClockSkewShare); err != nil {
			pool.Close()
			return nil, fmt.Errorf("open postgres store: %w", err)
		}
	}
	if _, err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	p.startCommitters()
	return p, nil
}

// connectPostgres opens a pool and checks that the database answers.
func connectPostgres(ctx context.Context, url string) (*pgxpool.Pool, error) {
	if strings.TrimSpace(url) == "" {
		return nil, errors.New("connect to postgres: the URL is empty")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message quotes the URL with the password masked "best
		// effort"; the URL is a secret, so none of it is repeated.
		return nil, errors.New("connect to postgres: the URL does not parse (want postgres://user@host:port/db?sslmode=…)")
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultPostgresConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		// pgx names the user, database and address, never the password.
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	return pool, nil
}

// checkClockSkew refuses a host clock too far from the database's.
func checkClockSkew(ctx context.Context, pool *pgxpool.Pool, now func() time.Time, limit time.Duration) error {
	before := now()
	var db time.Time
	if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&db); err != nil {
		return fmt.Errorf("read database clock: %w", err)
	}
	after := now()
	local := before.Add(after.Sub(before) / 2)
	skew := db.Sub(local)
	if skew < 0 {
		skew = -skew
	}
	if skew > limit+after.Sub(before) {
		return fmt.Errorf("this host's clock is %s from the database's, more than %s (a quarter of the lease): synchronize clocks (NTP)",
			skew.Round(time.Millisecond), limit)
	}
	return nil
}

// Close releases the connections. Calling it again does nothing.
func (p *Postgres) Close() error {
	p.closeOnce.Do(func() {
		p.vacuumMu.Lock()
		p.closed = true
		p.vacuumMu.Unlock()
		p.vacuums.Wait()
		p.stopCommitters()
		p.pool.Close()
	})
	return nil
}

// Kind names the store in what an operator reads (/readyz).
func (p *Postgres) Kind() string { return "PostgreSQL" }

// Ping checks that the database answers and holds the jobs table (for
// /readyz: a replica that cannot reach it must not take deliveries).
func (p *Postgres) Ping(ctx context.Context) error {
	var one int
	err := p.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM jobs LIMIT 1) q`).Scan(&one)
	if err != nil {
		return fmt.Errorf("ping store: %w", err)
	}
	return nil
}

// nowUTC is the store clock, in the form PostgreSQL keeps: UTC, microseconds.
func (p *Postgres) nowUTC() time.Time {
	return p.now().UTC().Round(time.Microsecond)
}

// pgText makes a Go string storable as text: PostgreSQL refuses NUL bytes and
// invalid UTF-8, and a job must not fail to complete because its error text
// quoted a binary's output.
func pgText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
