package serverconfig

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// adminToken is an admin token long enough to be accepted.
const adminToken = "0123456789abcdef0123456789abcdef"

func TestAdminConfig(t *testing.T) {
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	hook := writeFile(t, dir, "hook", "hook-secret\n")
	token := writeFile(t, dir, "token", adminToken+"\n")
	short := writeFile(t, dir, "short", "tooshort\n")
	parse := func(admin string) (*Config, error) {
		return Parse("server.yaml", []byte(fmt.Sprintf(`version: 1
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
