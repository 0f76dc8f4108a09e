package bot

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/listener"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/store/storeopen"
)

const adminToken = "0123456789abcdef0123456789abcdef"

func quietLog() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

// newOpsServer is a Server on st with no GitHub traffic: enough for the admin,
// metrics and backup surfaces.
func newOpsServer(t *testing.T, st store.Store, storePath string, admin serverconfig.AdminConfig) *Server {
	t.Helper()
	gh := githubtest.New(t)
	cfg := &serverconfig.Config{
		Listen: "127.0.0.1:0", GitHubAPIURL: gh.URL(), AppID: gh.AppID(),
		PrivateKey: serverconfig.NewSecret(string(gh.AppPrivateKeyPEM())), WebhookSecret: serverconfig.NewSecret(testSecret),
		StorePath: storePath, TerraformBinary: tftest.Binary(t), LockTimeout: time.Minute,
		ApproverUsers: []string{approver}, Policy: policy.DefaultConfig(), AttestationTTL: time.Hour,
		QueueSize: 100, Workers: 1, WorkDir: t.TempDir(), ConvergeTimeout: time.Minute, ApplyLease: 5 * time.Second,
		Admin: admin,
	}
	srv, err := New(cfg, st, WithLogEntry(quietLog()))
	require.NoError(t, err)
	return srv
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

// The whole story of a restore: back the running service up over its admin
// listener, stop it, put the backup in place of the store, start again: the
// queued jobs and the records are there.
func TestAdminBackupAndRestore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	st := storeopen.Bolt(t, path)
	srv := newOpsServer(t, st, path, serverconfig.AdminConfig{Listen: "127.0.0.1:0", Token: serverconfig.NewSecret(adminToken)})
	ref := pullreq.Ref{Installation: 1, Owner: owner, Repo: repoName, Number: 7}
	require.NoError(t, srv.rec.PutPR(ctx, &records.PRState{Ref: ref, Author: author, HeadSHA: "abc123"}))
	job := &store.Job{DeliveryID: "delivery-1", Kind: webhook.JobKindEvent, Event: "pull_request", Payload: []byte(`{"n":1}`)}
	require.NoError(t, st.Enqueue(ctx, job, 0))

	stop, err := srv.startAdmin()
	require.NoError(t, err)
	resp := getBackup(t, "http://"+srv.adminAddr+listener.BackupPath, "Bearer "+adminToken)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	backup, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.EqualValues(t, len(backup), resp.ContentLength)

	// Written after the backup: not restored.
	require.NoError(t, srv.rec.PutPR(ctx, &records.PRState{Ref: pullreq.Ref{Installation: 1, Owner: owner, Repo: repoName, Number: 8}}))
	stop()
	require.NoError(t, st.Close())

	require.NoError(t, os.WriteFile(path, backup, 0o600)) // the restore: the file copied into place
	restored := storeopen.Bolt(t, path)
	srv = newOpsServer(t, restored, path, serverconfig.AdminConfig{})
	n, err := restored.CountQueued(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	got, err := restored.GetJob(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, []byte(`{"n":1}`), got.Payload)
	pr, err := srv.rec.PR(ctx, ref)
	require.NoError(t, err)
	require.NotNil(t, pr)
	require.Equal(t, "abc123", pr.HeadSHA)
	later, err := srv.rec.PR(ctx, pullreq.Ref{Installation: 1, Owner: owner, Repo: repoName, Number: 8})
	require.NoError(t, err)
	require.Nil(t, later)
}

func TestAdminListenerServesMetricsNotWebhooks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shardgate.db")
	srv := newOpsServer(t, storeopen.Bolt(t, path), path, serverconfig.AdminConfig{Listen: "127.0.0.1:0", Token: serverconfig.NewSecret(adminToken)})
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
	mresp := getBackup(t, main.URL+listener.BackupPath, "Bearer "+adminToken)
	require.Equal(t, http.StatusNotFound, mresp.StatusCode, "the backup is never served where webhooks arrive")
}

// A taken admin address stops the start with the address named.
func TestRunFailsWhenTheAdminAddressIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { taken.Close() })
	path := filepath.Join(t.TempDir(), "shardgate.db")
	srv := newOpsServer(t, storeopen.Bolt(t, path), path, serverconfig.AdminConfig{Listen: taken.Addr().String(), Token: serverconfig.NewSecret(adminToken)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.Run(ctx, time.Second)
	require.Error(t, err)
	require.Contains(t, err.Error(), "admin listener")
	require.Contains(t, err.Error(), taken.Addr().String())
}
