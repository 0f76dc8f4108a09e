package serverconfig

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/store"
)

// storeConfig is a valid configuration whose store section is section.
func storeConfig(t *testing.T, section string) string {
	t.Helper()
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	secret := writeFile(t, dir, "hook", "s3cret-hook\n")
	return fmt.Sprintf(`version: 1
github:
  app_id: 42
  private_key_file: %s
  webhook_secret_file: %s
store:
%s
terraform:
  work_dir: %s
approvers:
  users: [alice]
`, key, secret, section, dir)
}

const pgURL = "postgres://shardgate:pg-Passw0rd-xyz@db.internal:5432/shardgate?sslmode=require"

func TestConfigPostgresStore(t *testing.T) {
	urlFile := writeFile(t, t.TempDir(), "pg-url", pgURL+"\n")
	env := func(k string) (string, bool) {
		if k == "SG_PG" {
			return pgURL, true
		}
		return "", false
	}
	for name, section := range map[string]string{
		"file": "  postgres_url_file: " + urlFile + "\n  lease: 9s",
		"env":  "  postgres_url_env: SG_PG\n  lease: 9s",
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("server.yaml", []byte(storeConfig(t, section)), env)
			require.NoError(t, err)
			require.True(t, cfg.OnPostgres())
			require.Empty(t, cfg.StorePath)
			require.Equal(t, pgURL, cfg.PostgresURL.Reveal())
			require.Equal(t, 9*time.Second, cfg.JobLease)
			r := redact.New(cfg.SecretValues()...)
			out := r.Redact("dial " + pgURL + " failed; password pg-Passw0rd-xyz rejected")
			require.NotContains(t, out, "pg-Passw0rd-xyz", "the URL and its password alone are secrets")
			require.NotContains(t, fmt.Sprintf("%v %+v", cfg, cfg), "pg-Passw0rd")
		})
	}
	cfg, err := Parse("server.yaml", []byte(storeConfig(t, "  path: /var/lib/shardgate/db")), noEnv)
	require.NoError(t, err)
	require.False(t, cfg.OnPostgres())
	require.Equal(t, store.DefaultLease, cfg.JobLease)
	require.Equal(t, DefaultRetention, cfg.Retention)
	cfg, err = Parse("server.yaml", []byte(storeConfig(t, "  path: /var/lib/shardgate/db\n  retention: 2160h")), noEnv)
	require.NoError(t, err)
	require.Equal(t, 90*24*time.Hour, cfg.Retention)
}

func TestConfigStoreProblems(t *testing.T) {
	urlFile := writeFile(t, t.TempDir(), "pg-url", pgURL)
	empty := writeFile(t, t.TempDir(), "empty", "\n")
	bad := writeFile(t, t.TempDir(), "bad", "postgres://u:pg-Passw0rd-xyz@[::1/db")
	tests := []struct{ name, section, want string }{
		{"none", "  {}", "store.path is missing"},
		{"path and file", "  path: /x\n  postgres_url_file: " + urlFile, "exactly one of path, postgres_url_file and postgres_url_env"},
		{"file and env", "  postgres_url_file: " + urlFile + "\n  postgres_url_env: X", "exactly one of"},
		{"missing file", "  postgres_url_file: /nonexistent/pg-url", "store.postgres_url_file"},
		{"empty file", "  postgres_url_file: " + empty, "is empty"},
		{"unset env", "  postgres_url_env: NOPE", "NOPE is not set"},
		{"bad url", "  postgres_url_file: " + bad, "does not parse"},
		{"bad lease", "  postgres_url_file: " + urlFile + "\n  lease: soon", "store.lease"},
		{"lease on bbolt", "  path: /x\n  lease: 5s", "store.lease applies to a PostgreSQL store only"},
		{"bad retention", "  path: /x\n  retention: forever", "store.retention"},
		{"retention within redelivery", "  path: /x\n  retention: 24h", "shorter than 168h0m0s, the time GitHub may redeliver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("server.yaml", []byte(storeConfig(t, tt.section)), noEnv)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), "pg-Passw0rd", "no part of the URL in a problem")
		})
	}
	t.Run("work dir required", func(t *testing.T) {
		cfg := strings.Replace(storeConfig(t, "  postgres_url_file: "+urlFile), "  work_dir:", "  binary_unused_marker:", 1)
		cfg = cfg[:strings.Index(cfg, "  binary_unused_marker:")] + cfg[strings.Index(cfg, "approvers:"):]
		_, err := Parse("server.yaml", []byte(cfg), noEnv)
		require.ErrorContains(t, err, "terraform.work_dir is required with a PostgreSQL store")
	})
}
