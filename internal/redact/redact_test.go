package redact

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/policy/report"
)

var (
	testPEMOnce sync.Once
	testPEMVal  string
)

// testPEM is an RSA private key as an App's key file holds it.
func testPEM(t *testing.T) string {
	t.Helper()
	testPEMOnce.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		testPEMVal = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	})
	return testPEMVal
}

// pemBody is the key's base64 lines, without the armour.
func pemBody(key string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(key), "\n") {
		if !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// requireNoSecret fails when text holds a secret: the whole value, a line of
// it, or any Window-byte piece of one.
func requireNoSecret(t *testing.T, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		pieces := []string{strings.TrimSpace(s)}
		if strings.Contains(s, "\n") {
			pieces = pemBody(s)
		}
		for _, p := range pieces {
			if len(p) < Window {
				require.NotContains(t, text, p)
				continue
			}
			for i := 0; i+Window <= len(p); i++ {
				if strings.Contains(text, p[i:i+Window]) {
					t.Fatalf("text holds %q, a piece of a secret:\n%s", p[i:i+Window], text)
				}
			}
		}
	}
}

func TestRedactorHidesEveryFormOfASecret(t *testing.T) {
	key := testPEM(t)
	lines := pemBody(key)
	const webhook = "wh-3f9c1a7e5b2d40aa"
	const hostile = "Tr0ub4dor&3|`*_x@team#1<b>" // every character markdown escapes
	r := New(webhook, hostile, key)
	tests := []struct {
		name string
		in   string
		want string // "" when only the absence of secrets is checked
	}{
		{"the value in a sentence", "prefix " + webhook + " suffix", "prefix " + Redacted + " suffix"},
		{"two values side by side are one run", webhook + hostile, Redacted},
		{"a line of the key alone", "stream " + lines[3] + ".", "stream " + Redacted + "."},
		{"the whole key, armour kept", key, ""},
		{"the key's lines joined by replace()", strings.Join(lines, ""), Redacted},
		{"a piece of a line (substr)", "(" + lines[5][7:30] + ")", "(" + Redacted + ")"}, // delimiters no PEM line holds
		{"a cut value (truncated name)", webhook[:14] + "…", Redacted + "…"},
		{"escaped text", "rendered: " + report.Escape(hostile) + " done", "rendered: " + Redacted + " done"},
		{"a code span", "`` " + hostile + " ``", ""},
		{"a table cell", "| " + report.Code(hostile) + " |", ""},
		{"in a code block", report.CodeBlock("error: " + key), ""},
		{"no secret: unchanged", "module.stream_group[\"create-order/billing\"] scales 4 → 6", "module.stream_group[\"create-order/billing\"] scales 4 → 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := r.Redact(tt.in)
			requireNoSecret(t, out, webhook, hostile, key)
			if tt.want != "" {
				require.Equal(t, tt.want, out)
			}
			if strings.Contains(tt.in, "-----BEGIN") {
				require.Contains(t, out, "-----BEGIN RSA PRIVATE KEY-----", "the public armour is not a secret")
			}
		})
	}
}

func TestRedactorShortValuesAndCharacters(t *testing.T) {
	tests := []struct {
		name, secret, in, want string
	}{
		{"under MinLen: left, it would shred text", "abc", "abc abcdef", "abc abcdef"},
		{"MinLen is redacted", "hunt", "a hunt b", "a " + Redacted + " b"},
		{"short values everywhere they appear", "pa55", "pa55 and pa55pa55", Redacted + " and " + Redacted},
		{"multi-byte characters are never cut", "пароль-секрет-длинный", "«ароль-секрет-длинн»", "«п" + Redacted + "»"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := New(tt.secret).Redact(tt.in)
			require.True(t, utf8.ValidString(out), "%q", out)
			if tt.name == "multi-byte characters are never cut" {
				require.NotContains(t, out, "секрет")
				require.True(t, strings.HasPrefix(out, "«") && strings.HasSuffix(out, "»"), out)
				return
			}
			require.Equal(t, tt.want, out)
		})
	}
	var nilR *Redactor
	require.Equal(t, "anything", nilR.Redact("anything"))
	require.True(t, New("", "ab").Empty())
}

func TestRedactLogsScrubsMessageAndEveryField(t *testing.T) {
	const secret = "coordinator-write-password"
	var buf bytes.Buffer
	l := logrus.New()
	l.SetOutput(&buf)
	l.SetFormatter(&logrus.JSONFormatter{})
	log := logrus.NewEntry(l)
	Logs(log, New(secret))
	ghErr := fmt.Errorf("plan: %w", &github.ErrorResponse{Response: &http.Response{StatusCode: 502}, Message: "bad " + secret})
	log.WithFields(logrus.Fields{
		"stream_prefix": secret,
		"attempt":       3,
		"nested":        map[string]any{"group": "g-" + secret},
		"key-" + secret: "v",
	}).WithError(ghErr).Warn("planning " + secret)

	out := buf.String()
	requireNoSecret(t, out, secret)
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), out)
	require.Equal(t, "planning "+Redacted, line["msg"])
	require.Equal(t, Redacted, line["stream_prefix"])
	require.Equal(t, float64(3), line["attempt"], "numbers stay numbers")
	require.Contains(t, line["error"], "502")
	require.Contains(t, line, "key-"+Redacted)

	// A second server on the same logger keeps the first one's secrets out too.
	Logs(log, New("another-server-secret"))
	buf.Reset()
	log.Info(secret + " another-server-secret")
	requireNoSecret(t, buf.String(), secret, "another-server-secret")
}

func TestRedactorBodyKeepsJSONValid(t *testing.T) {
	const secret = `pa"ss\word-with-quote`
	r := New(secret)
	in, err := json.Marshal(map[string]any{"body": "leak " + secret + " end", "id": int64(1) << 60, "list": []any{secret, 2}})
	require.NoError(t, err)
	out := r.body(in)
	var got map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&got), string(out))
	require.Equal(t, "leak "+Redacted+" end", got["body"])
	require.Equal(t, json.Number("1152921504606846976"), got["id"], "ids stay exact")
	require.Equal(t, []any{Redacted, json.Number("2")}, got["list"])
	require.Equal(t, "text "+Redacted, string(r.body([]byte("text "+secret))), "a non-JSON body is redacted as text")
}

func TestRedactorErrorKeepsWhatItWraps(t *testing.T) {
	const secret = "webhook-secret-value"
	r := New(secret)
	cause := &github.ErrorResponse{Response: &http.Response{StatusCode: http.StatusBadGateway}, Message: secret}
	err := r.Error(fmt.Errorf("get pull request: %w", cause))
	require.NotContains(t, err.Error(), secret)
	var ghErr *github.ErrorResponse
	require.True(t, errors.As(err, &ghErr))
	plain := errors.New("no secret here")
	require.Same(t, plain, r.Error(plain), "an error without a secret is returned as it is")
	require.NoError(t, r.Error(nil))
}
