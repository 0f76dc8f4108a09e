package serverconfig

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const statusToken = "status-token-0123456789abcdef"

func TestStatusConfig(t *testing.T) {
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	hook := writeFile(t, dir, "hook", "hook-secret\n")
	token := writeFile(t, dir, "token", statusToken+"\n")
	short := writeFile(t, dir, "short", "tooshort\n")
	env := func(name string) (string, bool) {
		if name == "STATUS_TOKEN" {
			return statusToken, true
		}
		return "", false
	}
	parse := func(status string) (*Config, error) {
		return Parse("server.yaml", []byte(fmt.Sprintf(`version: 1
listen: 127.0.0.1:8080
github: {app_id: 1, private_key_file: %s, webhook_secret_file: %s}
store: {path: /var/lib/shardgate/db}
approvers: {users: [alice]}
admin: {listen: 127.0.0.1:9091, token_file: %s}
%s`, key, hook, token, status)), env)
	}
	tests := []struct {
		name    string
		status  string
		want    StatusConfig
		problem string
	}{
		{name: "absent: off", status: ""},
		{name: "listen without a token", status: "status: {listen: 127.0.0.1:9092}", want: StatusConfig{Listen: "127.0.0.1:9092"}},
		{name: "token from a file", status: "status: {listen: 127.0.0.1:9092, token_file: " + token + "}",
			want: StatusConfig{Listen: "127.0.0.1:9092", Token: NewSecret(statusToken)}},
		{name: "token from the environment", status: "status: {listen: 127.0.0.1:9092, token_env: STATUS_TOKEN}",
			want: StatusConfig{Listen: "127.0.0.1:9092", Token: NewSecret(statusToken)}},
		{name: "both", status: "status: {listen: 127.0.0.1:9092, token_env: STATUS_TOKEN, token_file: " + token + "}", problem: "set token_file or token_env, not both"},
		{name: "unset variable", status: "status: {listen: 127.0.0.1:9092, token_env: NOPE}", problem: "status.token_env: NOPE is not set"},
		{name: "token without listen", status: "status: {token_file: " + token + "}", problem: "status.token_file or status.token_env is set but status.listen is not"},
		{name: "not host:port", status: "status: {listen: localhost}", problem: `status.listen "localhost" is not host:port`},
		{name: "the webhook address", status: "status: {listen: 127.0.0.1:8080}", problem: "the same address as listen"},
		{name: "the admin address", status: "status: {listen: 127.0.0.1:9091}", problem: "the same address as admin.listen"},
		{name: "short token", status: "status: {listen: 127.0.0.1:9092, token_file: " + short + "}", problem: "the token is 8 characters; use at least 16"},
		{name: "missing token file", status: "status: {listen: 127.0.0.1:9092, token_file: " + filepath.Join(dir, "nope") + "}", problem: "status.token_file: cannot read"},
		{name: "unknown key", status: "status: {listen: 127.0.0.1:9092, token: abc}", problem: "token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parse(tt.status)
			if tt.problem != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tt.problem)
				require.NotContains(t, err.Error(), statusToken)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want.Listen, cfg.Status.Listen)
			require.Equal(t, tt.want.Token.Reveal(), cfg.Status.Token.Reveal())
			require.Equal(t, tt.want.Listen != "", cfg.Status.Enabled())
			if !tt.want.Token.Empty() {
				require.Contains(t, cfg.SecretValues(), statusToken, "the token is redacted like every secret")
			}
		})
	}
}
