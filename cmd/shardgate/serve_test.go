package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/tftest"
)

// serveConfig writes a complete server configuration listening on listen.
func serveConfig(t *testing.T, listen string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, content []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, content, 0o600))
		return p
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	key := write("app.pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	secret := write("webhook-secret", []byte("a-webhook-secret"))
	return write("server.yaml", []byte(fmt.Sprintf(`version: 1
listen: %s
github:
  api_url: http://127.0.0.1:1/api/v3
  app_id: 1
  private_key_file: %s
  webhook_secret_file: %s
store:
  path: %s
terraform:
  binary: %s
  sandbox: none
approvers:
  users: [alice]
`, listen, key, secret, filepath.Join(dir, "shardgate.db"), tftest.Binary(t))))
}

// A service that cannot start (its listen address is taken) exits 2 with
// one line, like a configuration it cannot use; 1 means denied elsewhere.
func TestServeThatCannotListenExits2(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	var stdout, stderr bytes.Buffer
	code := runServe(context.Background(), []string{"--config", serveConfig(t, taken.Addr().String())}, &stdout, &stderr)
	require.Equal(t, exitUsage, code, stderr.String())
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	require.Contains(t, last, "shardgate serve: ")
	require.Contains(t, last, "address already in use")
	require.NotContains(t, stdout.String(), "serving", "nothing is announced before the bind succeeded")
}
