// Package storetest gives tests of any package a PostgreSQL schema of their
// own, so that they run in parallel, in one process or several, on one
// database without seeing each other's rows.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvPostgresURL names the database the PostgreSQL tests use, such as
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvPostgresURL = "SHARDGATE_TEST_POSTGRES_URL"

// testPoolSize bounds each test's connections: many tests share one server.
const testPoolSize = "4"

// PostgresURL creates a fresh schema sg_test_<random> and returns the URL of
// EnvPostgresURL with its search_path set to it; the schema is dropped when
// the test ends. The test is skipped, saying so, only when EnvPostgresURL is
// unset; a database that is set but unreachable fails it.
func PostgresURL(t testing.TB) string {
	t.Helper()
	SkipWithoutPostgres(t)
	base, _ := BaseURL()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random schema name: %v", err)
	}
	schema := "sg_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exec(ctx, t, base, "CREATE SCHEMA "+schema)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		exec(ctx, t, base, "DROP SCHEMA "+schema+" CASCADE")
	})
	return WithParams(t, base, map[string]string{"search_path": schema, "pool_max_conns": testPoolSize})
}

// SkipWithoutPostgres skips the test, saying why, when EnvPostgresURL is
// unset.
func SkipWithoutPostgres(t testing.TB) {
	t.Helper()
	if _, ok := BaseURL(); !ok {
		t.Skipf("%s is not set: the PostgreSQL case did not run (set it to e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", EnvPostgresURL)
	}
}

// BaseURL is EnvPostgresURL, when it is set.
func BaseURL() (string, bool) {
	u := strings.TrimSpace(os.Getenv(EnvPostgresURL))
	return u, u != ""
}

// WithParams sets connection parameters in a URL or key=value connection
// string, keeping any the string already sets except those given.
func WithParams(t testing.TB, conn string, params map[string]string) string {
	t.Helper()
	if strings.HasPrefix(conn, "postgres://") || strings.HasPrefix(conn, "postgresql://") {
		u, err := url.Parse(conn)
		if err != nil {
			t.Fatalf("%s does not parse as a URL", EnvPostgresURL) // the URL itself may hold a password
		}
		q := u.Query()
		for k, v := range params {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for k, v := range params {
		conn += " " + k + "=" + v
	}
	return conn
}

func exec(ctx context.Context, t testing.TB, conn, sql string) {
	t.Helper()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvPostgresURL, err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
