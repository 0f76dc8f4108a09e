package bot

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

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/report"
	"github.com/shardgate/shardgate/runner"
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
// it, or any RedactWindow-byte piece of one.
func requireNoSecret(t *testing.T, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		pieces := []string{strings.TrimSpace(s)}
		if strings.Contains(s, "\n") {
			pieces = pemBody(s)
		}
		for _, p := range pieces {
			if len(p) < RedactWindow {
				require.NotContains(t, text, p)
				continue
			}
			for i := 0; i+RedactWindow <= len(p); i++ {
				if strings.Contains(text, p[i:i+RedactWindow]) {
					t.Fatalf("text holds %q, a piece of a secret:\n%s", p[i:i+RedactWindow], text)
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
	r := newRedactor(webhook, hostile, key)
	tests := []struct {
		name string
		in   string
		want string // "" when only the absence of secrets is checked
	}{
		{"the value in a sentence", "prefix " + webhook + " suffix", "prefix " + runner.Redacted + " suffix"},
		{"two values side by side are one run", webhook + hostile, runner.Redacted},
		{"a line of the key alone", "stream " + lines[3] + ".", "stream " + runner.Redacted + "."},
		{"the whole key, armour kept", key, ""},
		{"the key's lines joined by replace()", strings.Join(lines, ""), runner.Redacted},
		{"a piece of a line (substr)", "(" + lines[5][7:30] + ")", "(" + runner.Redacted + ")"}, // delimiters no PEM line holds
		{"a cut value (truncated name)", webhook[:14] + "…", runner.Redacted + "…"},
		{"escaped text", "rendered: " + report.Escape(hostile) + " done", "rendered: " + runner.Redacted + " done"},
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
		{"under MinRedactLen: left, it would shred text", "abc", "abc abcdef", "abc abcdef"},
		{"MinRedactLen is redacted", "hunt", "a hunt b", "a " + runner.Redacted + " b"},
		{"short values everywhere they appear", "pa55", "pa55 and pa55pa55", runner.Redacted + " and " + runner.Redacted},
		{"multi-byte characters are never cut", "пароль-секрет-длинный", "«ароль-секрет-длинн»", "«п" + runner.Redacted + "»"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := newRedactor(tt.secret).Redact(tt.in)
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
	require.True(t, newRedactor("", "ab").Empty())
}

func TestNewRedactorFindsEverySecretOfTheConfig(t *testing.T) {
	key := testPEM(t)
	cfg := &Config{PrivateKey: NewSecret(key), WebhookSecret: NewSecret("the-webhook-secret"),
		Coordinators: []CoordinatorCredentials{
			{URLPrefix: "https://a.example", Username: "writer", Password: NewSecret("coordinator-a-password")},
			{URLPrefix: "https://b.example", Username: "writer", Password: NewSecret("coordinator-b-password")},
		}}
	r := NewRedactor(cfg)
	text := fmt.Sprintf("%s %s %s %s", "the-webhook-secret", "coordinator-a-password", "coordinator-b-password", pemBody(key)[2])
	out := r.Redact(text)
	require.Equal(t, strings.TrimSpace(strings.Repeat(runner.Redacted+" ", 4)), out)
	require.Equal(t, "writer https://a.example", r.Redact("writer https://a.example"), "usernames and URLs are not secret")
}

func TestRedactLogsScrubsMessageAndEveryField(t *testing.T) {
	const secret = "coordinator-write-password"
	var buf bytes.Buffer
	log := NewLogger(&buf, logrus.InfoLevel)
	RedactLogs(log, newRedactor(secret))
	ghErr := fmt.Errorf("plan: %w", &github.ErrorResponse{Response: &http.Response{StatusCode: 502}, Message: "bad " + secret})
	log.WithFields(logrus.Fields{
		FieldStream:     secret,
		"attempt":       3,
		"nested":        map[string]any{"group": "g-" + secret},
		"key-" + secret: "v",
	}).WithError(ghErr).Warn("planning " + secret)

	out := buf.String()
	requireNoSecret(t, out, secret)
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), out)
	require.Equal(t, "planning "+runner.Redacted, line["msg"])
	require.Equal(t, runner.Redacted, line[FieldStream])
	require.Equal(t, float64(3), line["attempt"], "numbers stay numbers")
	require.Contains(t, line["error"], "502")
	require.Contains(t, line, "key-"+runner.Redacted)

	// A second server on the same logger keeps the first one's secrets out too.
	RedactLogs(log, newRedactor("another-server-secret"))
	buf.Reset()
	log.Info(secret + " another-server-secret")
	requireNoSecret(t, buf.String(), secret, "another-server-secret")
}

func TestRedactorErrorKeepsWhatItWraps(t *testing.T) {
	const secret = "webhook-secret-value"
	r := newRedactor(secret)
	cause := &github.ErrorResponse{Response: &http.Response{StatusCode: http.StatusBadGateway}, Message: secret}
	err := r.Error(fmt.Errorf("get pull request: %w", cause))
	require.NotContains(t, err.Error(), secret)
	var ghErr *github.ErrorResponse
	require.True(t, errors.As(err, &ghErr))
	require.True(t, transient(err), "a redacted 502 is still retried")
	plain := errors.New("no secret here")
	require.Same(t, plain, r.Error(plain), "an error without a secret is returned as it is")
	require.NoError(t, r.Error(nil))
}

func TestRedactorBodyKeepsJSONValid(t *testing.T) {
	const secret = `pa"ss\word-with-quote`
	r := newRedactor(secret)
	in, err := json.Marshal(map[string]any{"body": "leak " + secret + " end", "id": int64(1) << 60, "list": []any{secret, 2}})
	require.NoError(t, err)
	out := r.body(in)
	var got map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&got), string(out))
	require.Equal(t, "leak "+runner.Redacted+" end", got["body"])
	require.Equal(t, json.Number("1152921504606846976"), got["id"], "ids stay exact")
	require.Equal(t, []any{runner.Redacted, json.Number("2")}, got["list"])
	require.Equal(t, "text "+runner.Redacted, string(r.body([]byte("text "+secret))), "a non-JSON body is redacted as text")
}

func TestScrubRemovesSecretsFromStoredRecords(t *testing.T) {
	key := testPEM(t)
	line := pemBody(key)[4]
	const webhook, password = "the-webhook-secret", "coordinator-password"
	rec := leakyPlan(webhook, password, line)
	newRedactor(webhook, password, key).Scrub(rec)
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	requireNoSecret(t, string(b), webhook, password, key)
	require.Equal(t, runner.Redacted, rec.ChangeSet.Changes[0].StreamPrefix)
	require.Contains(t, rec.Live, planparse.StreamKey("", runner.Redacted), "map keys too")
	require.Equal(t, 6, *rec.ChangeSet.Changes[0].ShardsAfter, "what holds no text is kept")
}

// leakyPlan is a plan record whose plan put server secrets into stream names,
// as a pull request reading them with file() does.
func leakyPlan(webhook, password, keyLine string) *PlanRecord {
	four, six := 4, 6
	changes := []planparse.Change{
		{Address: `module.leak["webhook"].terraform_data.stream_group`, StreamPrefix: webhook, ConsumerGroup: "g",
			Stream: planparse.StreamKey("", webhook), Action: planparse.ActionScale, ShardsBefore: &four, ShardsAfter: &six},
		{Address: `module.leak["password"].terraform_data.stream_group`, StreamPrefix: "p", ConsumerGroup: password,
			Stream: planparse.StreamKey("", "p"), Action: planparse.ActionCreate, ShardsAfter: &six},
		{Address: `module.leak["key"].terraform_data.stream_group`, StreamPrefix: keyLine, ConsumerGroup: "g|" + keyLine,
			Stream: planparse.StreamKey("", keyLine), Action: planparse.ActionCreate, ShardsAfter: &six},
	}
	var violations []policy.Violation
	for _, c := range changes {
		violations = append(violations, policy.Violation{Rule: "max_shard_delta", StreamPrefix: c.StreamPrefix, ConsumerGroup: c.ConsumerGroup,
			Address: c.Address, Message: "stream " + c.StreamPrefix + "/" + c.ConsumerGroup + " scales too far", Stream: c.Stream})
	}
	return &PlanRecord{Project: "streams", Dir: "streams", Workspace: "default", HeadSHA: strings.Repeat("a", 40),
		ChangeSet: &planparse.ChangeSet{FormatVersion: "1.2", Changes: changes,
			Resources: []planparse.ResourceChange{{Address: changes[0].Address, Actions: []string{"update"},
				Diff: []string{"input.stream_prefix: \"old\" -> \"" + webhook + "\""}}}},
		Live:     map[string]policy.LiveStream{planparse.StreamKey("", webhook): {}},
		Decision: policy.Decision{Allowed: false, Changes: changes, Violations: violations},
		Error:    "",
		Coordinator: policy.Coordinator{Consulted: true, Reachable: false,
			Error: "GET /streams/" + password + ": 503"},
		LockWaits: []report.LockWait{}}
}
