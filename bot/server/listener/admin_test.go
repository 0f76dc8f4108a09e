package listener

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storeopen"
)

const adminToken = "0123456789abcdef0123456789abcdef"

func quietLog() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

func getBackup(t *testing.T, url, auth string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestBackupHandlerRequiresTheToken(t *testing.T) {
	st := storeopen.Bolt(t, filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, st.Put(context.Background(), "plans", "k", []byte("secret plan")))
	web := httptest.NewServer(BackupHandler(st, serverconfig.NewSecret(adminToken), quietLog()))
	t.Cleanup(web.Close)

	for name, auth := range map[string]string{
		"no header":       "",
		"wrong token":     "Bearer " + strings.Repeat("x", len(adminToken)),
		"token prefix":    "Bearer " + adminToken[:10],
		"token, no kind":  adminToken,
		"basic auth kind": "Basic " + adminToken,
	} {
		t.Run(name, func(t *testing.T) {
			resp := getBackup(t, web.URL, auth)
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
			b, _ := io.ReadAll(resp.Body)
			require.NotContains(t, string(b), "secret plan")
		})
	}

	resp, err := http.Post(web.URL, "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	empty := httptest.NewServer(BackupHandler(st, serverconfig.Secret{}, quietLog()))
	t.Cleanup(empty.Close)
	require.Equal(t, http.StatusUnauthorized, getBackup(t, empty.URL, "Bearer ").StatusCode,
		"no configured token opens nothing")
}

// nonBackupStore hides Bolt's backup method, as the PostgreSQL store lacks it.
type nonBackupStore struct{ store.Store }

func TestBackupHandlerOfAStoreThatCannotCopyItself(t *testing.T) {
	st := storeopen.Bolt(t, filepath.Join(t.TempDir(), "shardgate.db"))
	web := httptest.NewServer(BackupHandler(nonBackupStore{st}, serverconfig.NewSecret(adminToken), quietLog()))
	t.Cleanup(web.Close)
	resp := getBackup(t, web.URL, "Bearer "+adminToken)
	require.Equal(t, http.StatusNotImplemented, resp.StatusCode)
}
