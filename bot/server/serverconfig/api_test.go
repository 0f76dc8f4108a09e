package serverconfig

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAPIConfig(t *testing.T) {
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	hook := writeFile(t, dir, "hook", "hook-secret\n")
	const ci, ops = "ci-token-0123456789abcdef", "ops:token:with-colons-0123"
	good := writeFile(t, dir, "good", "# who may call\n\nci:"+ci+":read\n ops:"+ops+":write \n")
	parse := func(section string) (*Config, error) {
		return Parse("server.yaml", []byte(fmt.Sprintf(`version: 1
listen: 127.0.0.1:8080
github: {app_id: 1, private_key_file: %s, webhook_secret_file: %s}
store: {path: /var/lib/shardgate/db}
approvers: {users: [alice]}
%s`, key, hook, section)), nil)
	}
	cfg, err := parse("status: {listen: 127.0.0.1:9092}\napi: {tokens_file: " + good + "}")
	require.NoError(t, err)
	require.Equal(t, []APIToken{{Name: "ci", Token: NewSecret(ci), Scope: "read"}, {Name: "ops", Token: NewSecret(ops), Scope: "write"}}, cfg.API.Tokens)
	require.True(t, cfg.API.Enabled())
	cfg, err = parse("status: {listen: 127.0.0.1:9092}")
	require.NoError(t, err)
	require.False(t, cfg.API.Enabled())

	for _, tt := range []struct{ name, file, problem string }{
		{"no scope", "ci:" + ci, "line 1 is not name:token:scope"},
		{"bad scope", "ci:" + ci + ":admin", `line 1: the scope "admin" is not read or write`},
		{"short token", "ci:short:read", "line 1: the token is 5 characters; use at least 16"},
		{"bad name", "c i:" + ci + ":read", `the name "c i" is not letters`},
		{"name twice", "ci:" + ci + ":read\nci:" + ops + ":write", `line 2: the name "ci" is given twice`},
		{"token twice", "ci:" + ci + ":read\nops:" + ci + ":write", `line 2: the token of "ops" is another name's too`},
		{"empty", "# nothing\n", "has no token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := writeFile(t, t.TempDir(), "tokens", tt.file)
			_, err := parse("status: {listen: 127.0.0.1:9092}\napi: {tokens_file: " + f + "}")
			require.ErrorContains(t, err, tt.problem)
			require.NotContains(t, err.Error(), ci, "no token in a problem")
		})
	}
	_, err = parse("api: {tokens_file: " + good + "}")
	require.ErrorContains(t, err, "api.tokens_file is set but status.listen is not")
	_, err = parse("status: {listen: 127.0.0.1:9092}\napi: {tokens_file: " + filepath.Join(dir, "nope") + "}")
	require.ErrorContains(t, err, "api.tokens_file: cannot read")
}
