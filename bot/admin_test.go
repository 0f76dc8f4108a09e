package bot

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/githubtest"
	"github.com/shardgate/shardgate/internal/tftest"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
)

const adminToken = "0123456789abcdef0123456789abcdef"

func quietLog() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

// newOpsServer is a Server on st with no GitHub traffic: enough for the admin,
// metrics and backup surfaces.
func newOpsServer(t *testing.T, st store.Store, storePath string, admin AdminConfig) *Server {
	t.Helper()
	gh := githubtest.New(t)
	cfg := &Config{
		Listen: "127.0.0.1:0", GitHubAPIURL: gh.URL(), AppID: gh.AppID(),
		PrivateKey: NewSecret(string(gh.AppPrivateKeyPEM())), WebhookSecret: NewSecret(testSecret),
		StorePath: storePath, TerraformBinary: tftest.Binary(t), LockTimeout: time.Minute,
		ApproverUsers: []string{approver}, Policy: policy.DefaultConfig(), AttestationTTL: time.Hour,
		QueueSize: 100, Workers: 1, WorkDir: t.TempDir(), ConvergeTimeout: time.Minute, ApplyLease: 5 * time.Second,
		Admin: admin,
	}
	srv, err := New(cfg, st, WithLogEntry(quietLog()))
	require.NoError(t, err)
	return srv
}

func openTestBolt(t *testing.T, path string) *store.Bolt {
	t.Helper()
	st, err := store.OpenBolt(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
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
	st := openTestBolt(t, filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, st.Put(context.Background(), "plans", "k", []byte("secret plan")))
	web := httptest.NewServer(BackupHandler(st, NewSecret(adminToken), quietLog()))
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

	empty := httptest.NewServer(BackupHandler(st, Secret{}, quietLog()))
	t.Cleanup(empty.Close)
	require.Equal(t, http.StatusUnauthorized, getBackup(t, empty.URL, "Bearer ").StatusCode,
		"no configured token opens nothing")
}

// nonBackupStore hides Bolt's backup method, as the PostgreSQL store lacks it.
type nonBackupStore struct{ store.Store }

func TestBackupHandlerOfAStoreThatCannotCopyItself(t *testing.T) {
	st := openTestBolt(t, filepath.Join(t.TempDir(), "shardgate.db"))
	web := httptest.NewServer(BackupHandler(nonBackupStore{st}, NewSecret(adminToken), quietLog()))
	t.Cleanup(web.Close)
	resp := getBackup(t, web.URL, "Bearer "+adminToken)
	require.Equal(t, http.StatusNotImplemented, resp.StatusCode)
}

// The whole story of a restore: back the running service up over its admin
// listener, stop it, put the backup in place of the store, start again: the
// queued jobs and the records are there.
func TestAdminBackupAndRestore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	st := openTestBolt(t, path)
	srv := newOpsServer(t, st, path, AdminConfig{Listen: "127.0.0.1:0", Token: NewSecret(adminToken)})
	ref := PRRef{Installation: 1, Owner: owner, Repo: repoName, Number: 7}
	require.NoError(t, srv.rec.putPR(ctx, &PRState{Ref: ref, Author: author, HeadSHA: "abc123"}))
	job := &store.Job{DeliveryID: "delivery-1", Kind: JobKindEvent, Event: "pull_request", Payload: []byte(`{"n":1}`)}
	require.NoError(t, st.Enqueue(ctx, job, 0))

	stop, err := srv.startAdmin()
	require.NoError(t, err)
	resp := getBackup(t, "http://"+srv.adminAddr+BackupPath, "Bearer "+adminToken)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	backup, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.EqualValues(t, len(backup), resp.ContentLength)

	// Written after the backup: not restored.
	require.NoError(t, srv.rec.putPR(ctx, &PRState{Ref: PRRef{Installation: 1, Owner: owner, Repo: repoName, Number: 8}}))
	stop()
	require.NoError(t, st.Close())

	require.NoError(t, os.WriteFile(path, backup, 0o600)) // the restore: the file copied into place
	restored := openTestBolt(t, path)
	srv = newOpsServer(t, restored, path, AdminConfig{})
	n, err := restored.CountQueued(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	got, err := restored.GetJob(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, []byte(`{"n":1}`), got.Payload)
	pr, err := srv.rec.pr(ctx, ref)
	require.NoError(t, err)
	require.NotNil(t, pr)
	require.Equal(t, "abc123", pr.HeadSHA)
	later, err := srv.rec.pr(ctx, PRRef{Installation: 1, Owner: owner, Repo: repoName, Number: 8})
	require.NoError(t, err)
	require.Nil(t, later)
}

func TestAdminListenerServesMetricsNotWebhooks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shardgate.db")
	srv := newOpsServer(t, openTestBolt(t, path), path, AdminConfig{Listen: "127.0.0.1:0", Token: NewSecret(adminToken)})
	stop, err := srv.startAdmin()
	require.NoError(t, err)
	t.Cleanup(stop)
	base := "http://" + srv.adminAddr
	for path, want := range map[string]int{"/metrics": 200, "/healthz": 200, "/webhook": 404} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, path)
	}
	main := httptest.NewServer(srv.Handler())
	t.Cleanup(main.Close)
	mresp := getBackup(t, main.URL+BackupPath, "Bearer "+adminToken)
	require.Equal(t, http.StatusNotFound, mresp.StatusCode, "the backup is never served where webhooks arrive")
}

// A taken admin address stops the start with the address named.
func TestRunFailsWhenTheAdminAddressIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { taken.Close() })
	path := filepath.Join(t.TempDir(), "shardgate.db")
	srv := newOpsServer(t, openTestBolt(t, path), path, AdminConfig{Listen: taken.Addr().String(), Token: NewSecret(adminToken)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.Run(ctx, time.Second)
	require.Error(t, err)
	require.Contains(t, err.Error(), "admin listener")
	require.Contains(t, err.Error(), taken.Addr().String())
}

func TestAdminConfig(t *testing.T) {
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	hook := writeFile(t, dir, "hook", "hook-secret\n")
	token := writeFile(t, dir, "token", adminToken+"\n")
	short := writeFile(t, dir, "short", "tooshort\n")
	parse := func(admin string) (*Config, error) {
		return ParseConfig("server.yaml", []byte(fmt.Sprintf(`version: 1
listen: 127.0.0.1:8080
github: {app_id: 1, private_key_file: %s, webhook_secret_file: %s}
store: {path: /var/lib/shardgate/db}
approvers: {users: [alice]}
%s`, key, hook, admin)), noEnv)
	}
	tests := []struct {
		name    string
		admin   string
		want    AdminConfig
		problem string
	}{
		{name: "absent: off", admin: ""},
		{name: "listen and token", admin: "admin: {listen: 127.0.0.1:9091, token_file: " + token + "}",
			want: AdminConfig{Listen: "127.0.0.1:9091", Token: NewSecret(adminToken)}},
		{name: "listen without token", admin: "admin: {listen: 127.0.0.1:9091}", problem: "admin.listen needs admin.token_file"},
		{name: "token without listen", admin: "admin: {token_file: " + token + "}", problem: "admin.token_file is set but admin.listen is not"},
		{name: "port out of range", admin: "admin: {listen: 127.0.0.1:99999, token_file: " + token + "}", problem: `admin.listen "127.0.0.1:99999" is not host:port`},
		{name: "not host:port", admin: "admin: {listen: localhost, token_file: " + token + "}", problem: `admin.listen "localhost" is not host:port`},
		{name: "the webhook address", admin: "admin: {listen: 127.0.0.1:8080, token_file: " + token + "}", problem: "the same address as listen"},
		{name: "short token", admin: "admin: {listen: 127.0.0.1:9091, token_file: " + short + "}", problem: "the token is 8 characters; use at least 16"},
		{name: "missing token file", admin: "admin: {listen: 127.0.0.1:9091, token_file: " + filepath.Join(dir, "nope") + "}", problem: "admin.token_file: cannot read"},
		{name: "inline token refused", admin: "admin: {listen: 127.0.0.1:9091, token: abc}", problem: "token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parse(tt.admin)
			if tt.problem != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tt.problem)
				require.NotContains(t, err.Error(), adminToken)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want.Listen, cfg.Admin.Listen)
			require.Equal(t, tt.want.Token.Reveal(), cfg.Admin.Token.Reveal())
			require.Equal(t, tt.want.Listen != "", cfg.Admin.Enabled())
		})
	}
}
