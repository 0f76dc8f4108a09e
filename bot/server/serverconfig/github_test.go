package serverconfig

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
)

func parseGitHub(t *testing.T, github string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	secret := writeFile(t, dir, "hook", "s3cret-hook\n")
	return Parse("server.yaml", []byte(fmt.Sprintf(`
version: 1
github:
  app_id: 42
  private_key_file: %s
  webhook_secret_file: %s
%s
store:
  path: /var/lib/shardgate/db
approvers:
  users: [alice]
`, key, secret, github)), noEnv)
}

func TestGitHubPaceDefaults(t *testing.T) {
	cfg, err := parseGitHub(t, "")
	require.NoError(t, err)
	require.Equal(t, ghapp.Pace{ContentPerMinute: 80, ContentPerHour: 500, ContentBurst: 10, MaxConcurrent: 50}, cfg.GitHubPace)
}

func TestGitHubPaceSettings(t *testing.T) {
	cfg, err := parseGitHub(t, `  content_per_minute: 20
  content_per_hour: 300
  content_burst: 4
  max_concurrent_requests: 8`)
	require.NoError(t, err)
	require.Equal(t, ghapp.Pace{ContentPerMinute: 20, ContentPerHour: 300, ContentBurst: 4, MaxConcurrent: 8}, cfg.GitHubPace)

	_, err = parseGitHub(t, `  content_per_minute: 5
  content_per_hour: 4
  content_burst: 5
  max_concurrent_requests: -1`)
	var cerr *Error
	require.ErrorAs(t, err, &cerr)
	want := []string{
		"github.max_concurrent_requests must be positive, got -1",
		"github.content_burst (5) must be below github.content_per_minute (5): the rest of the minute's requests are spaced out",
		"github.content_per_minute (5) must not exceed github.content_per_hour (4)",
	}
	for _, w := range want {
		require.True(t, containsAny(cerr.Problems, w), "missing problem %q in %q", w, cerr.Problems)
	}
	require.Len(t, cerr.Problems, len(want))
}
