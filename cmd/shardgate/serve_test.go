package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/terraform/runner"
)

// serveConfig writes a complete server configuration listening on listen,
// with terraform.sandbox set to sandbox and extra YAML appended.
func serveConfig(t *testing.T, listen, sandbox, extra string) string {
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
  sandbox: %s
approvers:
  users: [alice]
%s`, listen, key, secret, filepath.Join(dir, "shardgate.db"), tftest.Binary(t), sandbox, extra)))
}

// A service that cannot start (its listen address is taken) exits 2 with
// one line, like a configuration it cannot use; 1 means denied elsewhere.
func TestServeThatCannotListenExits2(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	var stdout, stderr bytes.Buffer
	code := runServe(context.Background(), []string{"--config", serveConfig(t, taken.Addr().String(), "none", "")}, &stdout, &stderr)
	require.Equal(t, exitUsage, code, stderr.String())
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	require.Contains(t, last, "shardgate serve: ")
	require.Contains(t, last, "address already in use")
	require.NotContains(t, stdout.String(), "serving", "nothing is announced before the bind succeeded")
}

// Start-up names the sandbox terraform runs in (Landlock with its ABI
// version, or none) and every listener with its address, in the JSON logs.
func TestServeLogsTheSandboxAndEveryListener(t *testing.T) {
	for _, tt := range []struct{ sandbox, want string }{
		{"none", "sandbox: none (terraform.sandbox: none)"},
		{"landlock", map[bool]string{true: fmt.Sprintf("sandbox: Landlock ABI %d confines", runner.LandlockABI()),
			false: "sandbox: none: terraform cannot be sandboxed here"}[runner.SandboxSupported() == nil]},
	} {
		t.Run(tt.sandbox, func(t *testing.T) {
			token := filepath.Join(t.TempDir(), "admin-token")
			require.NoError(t, os.WriteFile(token, []byte("an-admin-token-of-32-characters!"), 0o600))
			cfg := serveConfig(t, "127.0.0.1:0", tt.sandbox, fmt.Sprintf("admin:\n  listen: 127.0.0.2:0\n  token_file: %s\nstatus:\n  listen: 127.0.0.3:0\n", token))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			serving := &firstWrite{seen: make(chan struct{})}
			var stderr bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- runServe(ctx, []string{"--config", cfg}, serving, &stderr) }()
			select {
			case <-serving.seen:
			case code := <-done:
				t.Fatalf("serve exited %d before serving: %s", code, stderr.String())
			}
			cancel()
			require.Equal(t, exitOK, <-done, stderr.String())

			var messages []string
			listeners := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				var entry map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &entry), line)
				messages = append(messages, fmt.Sprint(entry["msg"]))
				if name, ok := entry["listener"].(string); ok {
					listeners[name] = fmt.Sprint(entry["listen"])
				}
			}
			require.True(t, slices.ContainsFunc(messages, func(m string) bool { return strings.HasPrefix(m, tt.want) }), "no %q in %q", tt.want, messages)
			require.Len(t, listeners, 3, "%v", listeners)
			for _, name := range []string{"webhook listener", "admin listener", "status page listener"} {
				require.Regexp(t, `^127\.0\.0\.[123]:[1-9][0-9]*$`, listeners[name], name)
			}
		})
	}
}

// firstWrite is a writer that closes seen at its first write.
type firstWrite struct {
	once sync.Once
	seen chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.seen) })
	return len(p), nil
}
