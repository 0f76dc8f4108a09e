package bot

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

func noEnv(string) (string, bool) { return "", false }

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// The configuration's default apply lease is the apply queue's.
func TestDefaultApplyLeaseIsTheQueues(t *testing.T) {
	require.Equal(t, applyqueue.DefaultLease, serverconfig.DefaultApplyLease)
}

// A private key GitHub's client cannot use is named by its file at start.
func TestBadPrivateKeyNamesItsFile(t *testing.T) {
	dir := t.TempDir()
	keyFile := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	hook := writeFile(t, dir, "hook", "hook-secret\n")
	cfg, err := serverconfig.Parse("config.yaml", []byte(fmt.Sprintf(`version: 1
github: {app_id: 7, private_key_file: %s, webhook_secret_file: %s}
store: {path: %s}
approvers: {users: [alice]}
terraform: {work_dir: %s}
`, keyFile, hook, filepath.Join(dir, "db"), dir)), noEnv)
	require.NoError(t, err)
	st, err := store.OpenBolt(cfg.StorePath)
	require.NoError(t, err)
	defer st.Close()
	_, err = New(cfg, st, WithLogEntry(quietLog()))
	require.Error(t, err)
	require.Contains(t, err.Error(), "github.private_key_file "+keyFile+": ")
	require.NotContains(t, err.Error(), "abc")
}
