package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storetest"
)

const storeTestSecret = "pw-that-must-never-print"

func TestStoreMigrateUsage(t *testing.T) {
	dir := t.TempDir()
	urlFile := filepath.Join(dir, "url")
	require.NoError(t, os.WriteFile(urlFile, []byte("postgres://sg:"+storeTestSecret+"@127.0.0.1:1/sg\n"), 0o600))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	t.Setenv("SG_TEST_EMPTY_URL", "")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no subcommand", args: []string{"store"}, want: "a subcommand is required"},
		{name: "unknown subcommand", args: []string{"store", "frobnicate"}, want: `unknown subcommand "frobnicate"`},
		{name: "no url", args: []string{"store", "migrate", "--dry-run"}, want: "exactly one of --postgres-url-env and --postgres-url-file"},
		{name: "both urls", args: []string{"store", "migrate", "--postgres-url-env", "X", "--postgres-url-file", urlFile},
			want: "exactly one of"},
		{name: "unset variable", args: []string{"store", "migrate", "--postgres-url-env", "SG_TEST_NO_SUCH_VARIABLE"},
			want: "environment variable SG_TEST_NO_SUCH_VARIABLE is not set"},
		{name: "empty variable", args: []string{"store", "migrate", "--postgres-url-env", "SG_TEST_EMPTY_URL"},
			want: "SG_TEST_EMPTY_URL is empty"},
		{name: "missing file", args: []string{"store", "migrate", "--postgres-url-file", filepath.Join(dir, "nope")},
			want: "no such file"},
		{name: "empty file", args: []string{"store", "migrate", "--postgres-url-file", empty}, want: "is empty"},
		{name: "unknown flag", args: []string{"store", "migrate", "--postgres-url", "x"}, want: "flag provided but not defined"},
		{name: "stray argument", args: []string{"store", "migrate", "--postgres-url-file", urlFile, "now"},
			want: `unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			require.Equal(t, exitUsage, code)
			require.Empty(t, out)
			require.Contains(t, errOut, tt.want)
			require.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			require.NotContains(t, errOut, storeTestSecret)
		})
	}
}

// A database that cannot be reached is a failure, not bad usage, and says so
// without the URL or its password.
func TestStoreMigrateNeverPrintsTheURL(t *testing.T) {
	url := "postgres://sg:" + storeTestSecret + "@127.0.0.1:1/sg?connect_timeout=5"
	urlFile := filepath.Join(t.TempDir(), "url")
	require.NoError(t, os.WriteFile(urlFile, []byte(url), 0o600))
	t.Setenv("SG_TEST_STORE_URL", url)
	for _, args := range [][]string{
		{"store", "migrate", "--dry-run", "--postgres-url-env", "SG_TEST_STORE_URL"},
		{"store", "migrate", "--postgres-url-file", urlFile},
	} {
		code, out, errOut := run(t, args...)
		require.Equal(t, exitDenied, code, errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, "shardgate store migrate: connect to postgres")
		require.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		require.NotContains(t, errOut, storeTestSecret)
		require.NotContains(t, errOut, "127.0.0.1:1/sg")
	}
}

func TestStoreMigrateDryRunThenApply(t *testing.T) {
	url := storetest.PostgresURL(t) // skips, saying why, without a database
	t.Setenv("SG_TEST_STORE_URL", url)
	all, err := store.Migrations()
	require.NoError(t, err)
	migrate := func(dry bool) string {
		t.Helper()
		args := []string{"store", "migrate", "--postgres-url-env", "SG_TEST_STORE_URL"}
		if dry {
			args = append(args, "--dry-run")
		}
		code, out, errOut := run(t, args...)
		require.Equal(t, exitOK, code, errOut)
		require.Empty(t, errOut)
		require.NotContains(t, out, url)
		return out
	}

	dry := migrate(true)
	for _, m := range all {
		require.Contains(t, dry, "-- would apply "+m.Name+"\n"+strings.TrimRight(m.SQL, "\n")+"\n")
	}
	require.Contains(t, dry, fmt.Sprintf("would apply %d migration(s), schema version 0 to %d", len(all), len(all)))
	require.Equal(t, dry, migrate(true), "a dry run changes nothing")

	applied := migrate(false)
	require.Equal(t, strings.ReplaceAll(dry, "would apply", "applied"), applied)
	upToDate := fmt.Sprintf("schema is up to date at version %d: nothing to apply\n", len(all))
	require.Equal(t, upToDate, migrate(true))
	require.Equal(t, upToDate, migrate(false))
}
