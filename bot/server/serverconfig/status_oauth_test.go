package serverconfig

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStatusGitHubOAuth(t *testing.T) {
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	hook := writeFile(t, dir, "hook", "hook-secret\n")
	const clientSecret = "0123456789abcdef0123456789abcdef01234567"
	secret := writeFile(t, dir, "oauth-client-secret", clientSecret+"\n")
	short := writeFile(t, dir, "short", "abc\n")
	parse := func(status string) (*Config, error) {
		return Parse("server.yaml", []byte(fmt.Sprintf(`version: 1
listen: 127.0.0.1:8080
github: {app_id: 1, private_key_file: %s, webhook_secret_file: %s}
store: {path: /var/lib/shardgate/db}
approvers: {users: [alice]}
%s`, key, hook, status)), nil)
	}
	cfg, err := parse("status: {listen: 127.0.0.1:9092, github_oauth: {client_id: Iv1.0123456789abcdef, client_secret_file: " + secret + "}}")
	require.NoError(t, err)
	require.Equal(t, &GitHubOAuth{ClientID: "Iv1.0123456789abcdef", ClientSecret: NewSecret(clientSecret)}, cfg.Status.OAuth)
	require.Contains(t, cfg.SecretValues(), clientSecret, "redacted like every secret")
	require.NotContains(t, fmt.Sprintf("%+v %v", cfg.Status, cfg.Status.OAuth), clientSecret)

	for name, tc := range map[string]struct{ status, problem string }{
		"without listen":       {"status: {github_oauth: {client_id: Iv1.abc, client_secret_file: " + secret + "}}", "status.github_oauth is set but status.listen is not"},
		"no client id":         {"status: {listen: 127.0.0.1:9092, github_oauth: {client_secret_file: " + secret + "}}", `status.github_oauth.client_id "" is not`},
		"client id for a URL":  {"status: {listen: 127.0.0.1:9092, github_oauth: {client_id: 'a&b=c', client_secret_file: " + secret + "}}", "status.github_oauth.client_id"},
		"no secret file":       {"status: {listen: 127.0.0.1:9092, github_oauth: {client_id: Iv1.abc}}", "status.github_oauth.client_secret_file is required"},
		"missing secret file":  {"status: {listen: 127.0.0.1:9092, github_oauth: {client_id: Iv1.abc, client_secret_file: " + filepath.Join(dir, "nope") + "}}", "status.github_oauth.client_secret_file: cannot read"},
		"short secret":         {"status: {listen: 127.0.0.1:9092, github_oauth: {client_id: Iv1.abc, client_secret_file: " + short + "}}", "the secret is 3 characters"},
		"the secret in config": {"status: {listen: 127.0.0.1:9092, github_oauth: {client_id: Iv1.abc, client_secret: x}}", "client_secret"},
	} {
		_, err := parse(tc.status)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), tc.problem, name)
		require.False(t, strings.Contains(err.Error(), clientSecret), name)
	}
}
