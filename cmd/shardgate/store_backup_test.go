package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/listener"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/store"
)

const backupToken = "0123456789abcdef0123456789abcdef"

// seededStore is a store with a queued job, a running one and a record.
func seededStore(t *testing.T) (string, *store.Bolt) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	st, err := store.OpenBolt(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	for _, d := range []string{"d-running", "d-queued"} {
		require.NoError(t, st.Enqueue(ctx, &store.Job{DeliveryID: d, Kind: "event", Event: "pull_request", Payload: []byte(d)}, 0))
	}
	j, err := st.Claim(ctx, "old-process")
	require.NoError(t, err)
	require.Equal(t, "d-running", j.DeliveryID)
	require.NoError(t, st.Put(ctx, "plans", "acme/streams#1", []byte("plan")))
	return path, st
}

// requireRestores puts backup in place of a store and checks the seeded state.
func requireRestores(t *testing.T, backup string) {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(backup)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "shardgate.db")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	st, err := store.OpenBolt(path)
	require.NoError(t, err)
	defer st.Close()
	n, err := st.RecoverRunning(ctx) // what the next start does
	require.NoError(t, err)
	require.Equal(t, 1, n)
	for _, want := range []string{"d-running", "d-queued"} {
		j, err := st.Claim(ctx, "w")
		require.NoError(t, err)
		require.Equal(t, want, j.DeliveryID)
		require.Equal(t, []byte(want), j.Payload)
	}
	v, err := st.Get(ctx, "plans", "acme/streams#1")
	require.NoError(t, err)
	require.Equal(t, []byte("plan"), v)
}

func requireNoFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "a failed backup leaves nothing behind")
}

func TestStoreBackupUsage(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.db")
	require.NoError(t, os.WriteFile(existing, []byte("keep"), 0o600))
	token := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(token, []byte(backupToken), 0o600))
	for name, tt := range map[string]struct {
		args []string
		want string
	}{
		"no file":           {[]string{"--store", "x.db"}, "give one BACKUP_FILE"},
		"two files":         {[]string{"--store", "x.db", "a", "b"}, "give one BACKUP_FILE"},
		"no source":         {[]string{"out.db"}, "give --url (a running shardgate) or --store"},
		"both sources":      {[]string{"--store", "x.db", "--url", "http://127.0.0.1:1", "out.db"}, "not both"},
		"url without token": {[]string{"--url", "http://127.0.0.1:1", "out.db"}, "--url needs --token-file"},
		"token with store":  {[]string{"--store", "x.db", "--token-file", token, "out.db"}, "--token-file goes with --url"},
		"not a url":         {[]string{"--url", "127.0.0.1:9091", "--token-file", token, "out.db"}, "is not an http(s) URL"},
		"existing file":     {[]string{"--store", "x.db", existing}, "already exists"},
		"unknown flag":      {[]string{"--force", "out.db"}, "flag provided but not defined"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := run(t, append([]string{"store", "backup"}, tt.args...)...)
			require.Equal(t, exitUsage, code)
			require.Contains(t, errOut, tt.want)
		})
	}
	b, err := os.ReadFile(existing)
	require.NoError(t, err)
	require.Equal(t, "keep", string(b))

	code, _, errOut := run(t, "store")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "backup")
	code, _, _ = run(t, "store", "nope")
	require.Equal(t, exitUsage, code)
}

// A stopped shardgate's store is copied from its file; a running one's file
// is refused with the way to back it up instead.
func TestStoreBackupOfAStoppedStore(t *testing.T) {
	path, st := seededStore(t)
	outDir := t.TempDir()
	dest := filepath.Join(outDir, "backup.db")

	code, _, errOut := run(t, "store", "backup", "--store", path, dest)
	require.Equal(t, exitDenied, code)
	require.Contains(t, errOut, "in use by another shardgate process")
	require.Contains(t, errOut, "--url")
	requireNoFiles(t, outDir)

	require.NoError(t, st.Close())
	code, out, errOut := run(t, "store", "backup", dest, "--store", path) // flags after the file too
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "backup written to "+dest)
	require.Contains(t, out, "2 jobs (1 queued)")
	fi, err := os.Stat(dest)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a backup holds webhook payloads: owner only")
	requireRestores(t, dest)
}

func backupServer(t *testing.T, st store.Store) *httptest.Server {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	mux := http.NewServeMux()
	mux.Handle(listener.BackupPath, listener.BackupHandler(st, serverconfig.NewSecret(backupToken), logrus.NewEntry(log)))
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	return web
}

func TestStoreBackupOfARunningServer(t *testing.T) {
	_, st := seededStore(t)
	web := backupServer(t, st)
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(token, []byte(backupToken+"\n"), 0o600))
	wrong := filepath.Join(dir, "wrong")
	require.NoError(t, os.WriteFile(wrong, []byte(strings.Repeat("w", 32)), 0o600))
	outDir := t.TempDir()
	dest := filepath.Join(outDir, "backup.db")

	code, _, errOut := run(t, "store", "backup", "--url", web.URL, "--token-file", wrong, dest)
	require.Equal(t, exitDenied, code)
	require.Contains(t, errOut, "the admin token was refused")
	require.NotContains(t, errOut, "wwww")
	requireNoFiles(t, outDir)

	code, out, errOut := run(t, "store", "backup", "--url", web.URL+"/", "--token-file", token, dest)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "2 jobs (1 queued)")
	require.NoError(t, st.Close()) // the server stops; its backup is put in place
	requireRestores(t, dest)
}

// A download that falls short, or a body that is not a store, never becomes
// a backup file.
func TestStoreBackupRefusesABrokenDownload(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(token, []byte(backupToken), 0o600))
	garbage := strings.Repeat("not a bbolt file ", 1000)
	for name, tt := range map[string]struct {
		h    http.HandlerFunc
		want string
	}{
		"cut short": {func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "1048576")
			w.Write([]byte("the first bytes"))
		}, "download backup"},
		"not a store": {func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(garbage)))
			w.Write([]byte(garbage))
		}, "not a whole store"},
		"no length": {func(w http.ResponseWriter, _ *http.Request) {
			w.(http.Flusher).Flush() // chunked: no Content-Length
			w.Write([]byte(garbage))
		}, "no Content-Length"},
		"server error": {func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "backup failed: disk", http.StatusInternalServerError)
		}, "500 Internal Server Error: backup failed: disk"},
	} {
		t.Run(name, func(t *testing.T) {
			h := tt.h
			web := httptest.NewServer(h)
			t.Cleanup(web.Close)
			outDir := t.TempDir()
			code, _, errOut := run(t, "store", "backup", "--url", web.URL, "--token-file", token, filepath.Join(outDir, "b.db"))
			require.Equal(t, exitDenied, code)
			require.Contains(t, errOut, tt.want)
			require.NotContains(t, errOut, backupToken)
			requireNoFiles(t, outDir)
		})
	}
}
