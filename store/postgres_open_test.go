package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store/storetest"
)

// The URL is a secret: no failure to open repeats any of it.
func TestOpenPostgresErrorsNeverCarryTheURL(t *testing.T) {
	const secret = "hunter2-not-for-logs"
	tests := []struct {
		name, url, want string
	}{
		{name: "empty", url: "  ", want: "the URL is empty"},
		{name: "bad port", url: "postgres://sg:" + secret + "@db.internal:notaport/sg", want: "does not parse"},
		{name: "bad key=value", url: "host=db password=" + secret + " port=x", want: "does not parse"},
		{name: "nothing listening", url: "postgres://sg:" + secret + "@127.0.0.1:1/sg?connect_timeout=5", want: "connect to postgres"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := OpenPostgres(ctx, tt.url)
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), secret)
			_, err = PendingMigrations(ctx, tt.url)
			require.Error(t, err)
			require.NotContains(t, err.Error(), secret)
		})
	}
}

func TestMigrationsAreNumberedWithoutGaps(t *testing.T) {
	all, err := Migrations()
	require.NoError(t, err)
	require.NotEmpty(t, all)
	for i, m := range all {
		require.Equal(t, i+1, m.Version)
		require.Regexp(t, `^[0-9]{4}_[a-z0-9_]+\.sql$`, m.Name)
		require.NotEmpty(t, strings.TrimSpace(m.SQL))
	}
}

// sql runs statements on a store's schema, as an operator or a broken
// deployment would.
func sql(t *testing.T, url string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	pool, err := connectPostgres(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	for _, s := range stmts {
		_, err := pool.Exec(ctx, s)
		require.NoError(t, err, s)
	}
}

func TestOpenPostgresRefusesASchemaItDoesNotKnow(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	tests := []struct {
		name   string
		tamper []string
		want   string
	}{
		{name: "a newer shardgate migrated it",
			tamper: []string{`INSERT INTO schema_migrations (version, name, checksum) VALUES (99, '0099_future.sql', 'x')`},
			want:   "newer than this shardgate"},
		{name: "an applied migration differs from the embedded file",
			tamper: []string{`UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1`},
			want:   "migration 1 was applied as 0001_jobs.sql with checksum edited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			url := storetest.PostgresURL(t)
			require.NoError(t, openPostgres(t, url).Close())
			sql(t, url, tt.tamper...)
			_, err := OpenPostgres(ctx, url)
			require.ErrorContains(t, err, tt.want)
			_, err = PendingMigrations(ctx, url)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestOpenPostgresWithoutASchemaSaysWhichSetting(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	base, _ := storetest.BaseURL()
	url := storetest.WithParams(t, base, map[string]string{"search_path": "sg_no_such_schema"})
	_, err := OpenPostgres(context.Background(), url)
	require.ErrorContains(t, err, "search_path names no existing schema")
}

// Migrations run in one transaction: one that fails leaves no trace, and
// the next open (once the cause is gone) starts from scratch.
func TestFailedMigrationLeavesTheSchemaAsItWas(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	sql(t, url, `CREATE TABLE records (x int)`) // 0002 cannot create its table
	_, err := OpenPostgres(ctx, url)
	require.ErrorContains(t, err, "apply 0002_records.sql")
	pending, err := PendingMigrations(ctx, url)
	require.NoError(t, err)
	all, err := Migrations()
	require.NoError(t, err)
	require.Len(t, pending, len(all), "0001 was rolled back with 0002")
	sql(t, url, `DROP TABLE records`)
	require.NoError(t, openPostgres(t, url).Ping(ctx))
}

func TestPostgresClockSkew(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	ctx := context.Background()
	p := openPostgres(t, storetest.PostgresURL(t)) // the real clock, checked at open
	tests := []struct {
		name    string
		shift   time.Duration
		wantErr string
	}{
		{name: "agreeing clocks", shift: 0},
		{name: "a few seconds ahead, within a quarter of the lease", shift: 3 * time.Second},
		{name: "a minute behind", shift: -time.Minute, wantErr: "from the database's"},
		{name: "an hour ahead", shift: time.Hour, wantErr: "synchronize clocks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := func() time.Time { return time.Now().Add(tt.shift) }
			err := checkClockSkew(ctx, p.pool, now, DefaultLease/maxClockSkewShare)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestPostgresCloseIsIdempotent(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	ctx := context.Background()
	p, err := OpenPostgres(ctx, storetest.PostgresURL(t))
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	require.Error(t, p.Ping(ctx), "a closed store is not ready")
	require.Error(t, p.Enqueue(ctx, &Job{Kind: "x"}, 0))
	_, err = p.Claim(ctx, "w")
	require.Error(t, err)
}

func TestPostgresStoresWhatTextColumnsRefuse(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	ctx := context.Background()
	p := openPostgres(t, storetest.PostgresURL(t))
	j := enqueue(t, p, "d\x00\xff", "event", nil)
	claim(t, p, "w")
	// terraform's output quoted in an error may hold anything
	require.NoError(t, p.Complete(ctx, j.ID, "w", errors.New("exit 1: \xff\xfe\x00 binary")))
	got := getJob(t, p, j.ID)
	require.Equal(t, JobFailed, got.State)
	require.Equal(t, "exit 1: \uFFFD\uFFFD binary", got.LastError)

	key := strings.Repeat("k", maxPostgresKey)
	require.NoError(t, p.Put(ctx, "b", key, []byte("v")))
	require.ErrorContains(t, p.Put(ctx, "b", key+"k", []byte("v")), "over the limit")
	require.NoError(t, p.Put(ctx, "b", "\x00\xff", []byte("binary key")))
	v, err := p.Get(ctx, "b", "\x00\xff")
	require.NoError(t, err)
	require.Equal(t, []byte("binary key"), v)
}

func TestPostgresStoresLargePayloads(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	p := openPostgres(t, storetest.PostgresURL(t))
	big := []byte(strings.Repeat("0123456789abcdef", 25<<20/16)) // 25 MiB, intake's limit
	j := enqueue(t, p, "d1", "event", big)
	got := claim(t, p, "w")
	require.Equal(t, j.ID, got.ID)
	require.Equal(t, big, got.Payload)
	require.NoError(t, p.Complete(context.Background(), j.ID, "w", nil))
	require.Equal(t, big, getJob(t, p, j.ID).Payload)
}

func TestPostgresPayloadsUseLZ4WhereTheServerHasIt(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	ctx := context.Background()
	p := openPostgres(t, storetest.PostgresURL(t))
	var hasLZ4 bool
	require.NoError(t, p.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_settings
		WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals))`).Scan(&hasLZ4))
	var method string
	require.NoError(t, p.pool.QueryRow(ctx, `SELECT attcompression::text FROM pg_attribute
		WHERE attrelid = 'jobs'::regclass AND attname = 'payload'`).Scan(&method))
	if hasLZ4 {
		require.Equal(t, "l", method)
	} else {
		require.Empty(t, method, "the server's default")
	}
}
