// Package storeopen opens stores for the tests of the packages built on
// them (the apply queue, the webhook dispatcher, the bot, the listeners):
// a bbolt file closed when the test ends, or one more replica's connection
// to a PostgreSQL schema. Package store's own tests cannot use it (it
// imports store); they open theirs directly.
package storeopen

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store"
)

// Bolt opens a bbolt store at path ("" for a fresh file in the test's
// temporary directory), closed when the test ends.
func Bolt(t testing.TB, path string) *store.Bolt {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "shardgate.db")
	}
	st, err := store.OpenBolt(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// PostgresAt opens one more replica's store on url (storetest.PostgresURL)
// with the given lease, closed when the test ends.
func PostgresAt(t testing.TB, url string, lease time.Duration) *store.Postgres {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.OpenPostgres(ctx, url, store.WithLease(lease))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}
