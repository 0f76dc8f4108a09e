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
// version, or none), what it enforces on terraform's network, and every
// listener with its address, in the JSON logs.
func TestServeLogsTheSandboxAndEveryListener(t *testing.T) {
	for _, tt := range []struct{ sandbox, want, network string }{
		{"none", "sandbox: none (terraform.sandbox: none)", "not enforced: Direct connections are NOT stopped (terraform.sandbox: none)"},
		{"landlock", map[bool]string{true: fmt.Sprintf("sandbox: Landlock ABI %d confines", runner.LandlockABI()),
			false: "sandbox: none: terraform cannot be sandboxed here"}[runner.SandboxSupported() == nil],
			map[bool]string{true: "enforced: Direct connections: Landlock lets terraform connect only to its broker's port",
				false: "not enforced: Direct connections are NOT stopped"}[runner.SandboxConnectSupported() == nil]},
	} {
		t.Run(tt.sandbox, func(t *testing.T) {
			token := filepath.Join(t.TempDir(), "admin-token")
			require.NoError(t, os.WriteFile(token, []byte("an-admin-token-of-32-characters!"), 0o600))
			cfg := serveConfig(t, "127.0.0.1:0", tt.sandbox, fmt.Sprintf("admin:\n  listen: 127.0.0.2:0\n  token_file: %[1]s\nstatus:\n  listen: 127.0.0.3:0\n  token_file: %[1]s\n", token))
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
			for _, want := range []string{tt.want, tt.network, "enforced: Egress through the job's broker: the configured coordinators (mutations judged) and terraform.egress (registry.terraform.io:443, "} {
				require.True(t, slices.ContainsFunc(messages, func(m string) bool { return strings.HasPrefix(m, want) }), "no %q in %q", want, messages)
			}
			require.Len(t, listeners, 3, "%v", listeners)
			for _, name := range []string{"webhook listener", "admin listener", "status page listener"} {
				require.Regexp(t, `^127\.0\.0\.[123]:[1-9][0-9]*$`, listeners[name], name)
			}
		})
	}
}

// serve refuses what would break the broker's guarantee, exit 2 with the
// reason: a coordinator without credentials (unless insecure_no_auth says
// so), and a status page without a token where terraform's direct
// connections are not stopped (here: terraform.sandbox: none).
func TestServeRefusesWhatTheBrokerCannotGuard(t *testing.T) {
	for _, tt := range []struct{ name, sandbox, extra, want string }{
		{"a coordinator without credentials", "none", "coordinators:\n  - url_prefix: http://127.0.0.1:1\n",
			"coordinators[0] has no credentials"},
		{"a status page without a token", "none", "status:\n  listen: 127.0.0.3:0\n",
			"the status page needs status.token_file or status.token_env here"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runServe(context.Background(), []string{"--config", serveConfig(t, "127.0.0.1:0", tt.sandbox, tt.extra)}, &stdout, &stderr)
			require.Equal(t, exitUsage, code, stderr.String())
			require.Contains(t, stderr.String(), tt.want)
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
