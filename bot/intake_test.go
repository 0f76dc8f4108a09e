package bot

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store"
)

const testSecret = "webhook-secret"

func openStore(t testing.TB) *store.Bolt {
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func newTestIntake(t testing.TB, st store.Store, maxQueued int) *Intake {
	in, err := NewIntake(NewSecret(testSecret), st, []string{"pull_request", "issue_comment"}, maxQueued, Logger(context.Background()), nil)
	require.NoError(t, err)
	return in
}

func deliver(in http.Handler, method, event, delivery, signature string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/webhook", bytes.NewReader(body))
	if event != "" {
		req.Header.Set("X-GitHub-Event", event)
	}
	if delivery != "" {
		req.Header.Set("X-GitHub-Delivery", delivery)
	}
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	rec := httptest.NewRecorder()
	in.ServeHTTP(rec, req)
	return rec
}

func TestIntake(t *testing.T) {
	body := []byte(`{"action":"opened","number":1}`)
	good := sign(testSecret, body)
	tests := []struct {
		name      string
		method    string
		event     string
		delivery  string
		signature string
		body      []byte
		code      int
		queued    int
		reason    string
	}{
		{"queued", "POST", "pull_request", "d-1", good, body, 202, 1, `"queued"`},
		{"unsigned", "POST", "pull_request", "d-1", "", body, 401, 0, "X-Hub-Signature-256"},
		{"wrong secret", "POST", "pull_request", "d-1", sign("other", body), body, 401, 0, "does not match"},
		{"signature of other body", "POST", "pull_request", "d-1", sign(testSecret, []byte("{}")), body, 401, 0, "does not match"},
		{"not hex", "POST", "pull_request", "d-1", "sha256=zz", body, 401, 0, "does not match"},
		{"sha1 only", "POST", "pull_request", "d-1", "sha1=abc", body, 401, 0, "does not match"},
		{"ping", "POST", "ping", "d-2", sign(testSecret, []byte(`{"zen":"x"}`)), []byte(`{"zen":"x"}`), 200, 0, "pong"},
		{"unhandled event", "POST", "star", "d-3", good, body, 202, 0, "ignored"},
		{"no event header", "POST", "", "d-4", good, body, 400, 0, "X-GitHub-Event"},
		{"no delivery header", "POST", "pull_request", "", good, body, 400, 0, "X-GitHub-Delivery"},
		{"not json", "POST", "pull_request", "d-5", sign(testSecret, []byte("nope")), []byte("nope"), 400, 0, "not JSON"},
		{"GET", "GET", "pull_request", "d-6", good, body, 405, 0, "POST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			rec := deliver(newTestIntake(t, st, 10), tt.method, tt.event, tt.delivery, tt.signature, tt.body)
			require.Equal(t, tt.code, rec.Code, rec.Body.String())
			require.Contains(t, rec.Body.String(), tt.reason)
			n, err := st.CountQueued(context.Background())
			require.NoError(t, err)
			require.Equal(t, tt.queued, n)
		})
	}
}

func TestIntakeRedeliveryRunsOnce(t *testing.T) {
	st := openStore(t)
	in := newTestIntake(t, st, 10)
	body := []byte(`{"action":"opened"}`)
	first := deliver(in, "POST", "pull_request", "same", sign(testSecret, body), body)
	second := deliver(in, "POST", "pull_request", "same", sign(testSecret, body), body)
	require.Equal(t, 202, first.Code)
	require.Equal(t, 202, second.Code)
	require.Contains(t, second.Body.String(), "duplicate")
	n, err := st.CountQueued(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func TestIntakeQueueFull(t *testing.T) {
	st := openStore(t)
	in := newTestIntake(t, st, 2)
	body := []byte(`{}`)
	for i, want := range []int{202, 202, 503} {
		rec := deliver(in, "POST", "issue_comment", string(rune('a'+i)), sign(testSecret, body), body)
		require.Equal(t, want, rec.Code)
		if want == 503 {
			require.Equal(t, "60", rec.Header().Get("Retry-After"))
		}
	}
}

func TestIntakeBodyLimit(t *testing.T) {
	st := openStore(t)
	in := newTestIntake(t, st, 10)
	in.maxBytes = 1024
	body := []byte(`{"pad":"` + strings.Repeat("x", 2000) + `"}`)
	rec := deliver(in, "POST", "pull_request", "big", sign(testSecret, body), body)
	require.Equal(t, 413, rec.Code)
	n, _ := st.CountQueued(context.Background())
	require.Zero(t, n)
	require.EqualValues(t, DefaultMaxWebhookBytes, newTestIntake(t, st, 1).maxBytes, "the default limit is 25 MiB")
}

func TestNewIntakeRefusesNoSecret(t *testing.T) {
	_, err := NewIntake(Secret{}, openStore(t), nil, 1, Logger(context.Background()), nil)
	require.ErrorContains(t, err, "refuses unsigned webhooks")
}

func FuzzIntake(f *testing.F) {
	f.Add("pull_request", "d1", []byte(`{"action":"opened"}`), true)
	f.Add("ping", "d2", []byte(`{}`), true)
	f.Add("pull_request", "", []byte(`not json`), false)
	st := openStore(f)
	in := newTestIntake(f, st, 1000000)
	f.Fuzz(func(t *testing.T, event, delivery string, body []byte, signed bool) {
		sig := "sha256=00"
		if signed {
			sig = sign(testSecret, body)
		}
		rec := deliver(in, "POST", event, delivery, sig, body)
		resp := rec.Result()
		b, _ := io.ReadAll(resp.Body)
		require.Contains(t, []int{200, 202, 400, 401, 413, 503}, resp.StatusCode, string(b))
		if !signed {
			require.Equal(t, 401, resp.StatusCode)
		}
		require.True(t, strings.HasPrefix(string(b), "{"), "every answer is a JSON reason")
	})
}
