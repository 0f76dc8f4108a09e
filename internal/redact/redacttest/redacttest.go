// Package redacttest holds what tests of redaction share: a real RSA key as
// an App's key file holds it, its lines, and the assertion that a text holds
// no piece of a secret.
package redacttest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/redact"
)

var (
	pemOnce sync.Once
	pemVal  string
)

// PEM is an RSA private key as an App's key file holds it, one per test binary.
func PEM(t testing.TB) string {
	t.Helper()
	pemOnce.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		pemVal = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	})
	return pemVal
}

// PEMBody is a key's base64 lines, without the armour.
func PEMBody(key string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(key), "\n") {
		if !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// RequireNoSecret fails when text holds a secret: the whole value, a line of
// it, or any redact.Window-byte piece of one.
func RequireNoSecret(t testing.TB, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		pieces := []string{strings.TrimSpace(s)}
		if strings.Contains(s, "\n") {
			pieces = PEMBody(s)
		}
		for _, p := range pieces {
			if len(p) < redact.Window {
				require.NotContains(t, text, p)
				continue
			}
			for i := 0; i+redact.Window <= len(p); i++ {
				if strings.Contains(text, p[i:i+redact.Window]) {
					t.Fatalf("text holds %q, a piece of a secret:\n%s", p[i:i+redact.Window], text)
				}
			}
		}
	}
}
