package webhook

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storeopen"
)

const testSecret = "webhook-secret"

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func newTestIntake(t testing.TB, st store.Store, maxQueued int) *Intake {
	in, err := NewIntake(serverconfig.NewSecret(testSecret), st, []string{"pull_request", "issue_comment"}, maxQueued, logctx.Logger(context.Background()), nil)
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
			st := storeopen.Bolt(t, "")
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
	st := storeopen.Bolt(t, "")
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
	st := storeopen.Bolt(t, "")
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
	st := storeopen.Bolt(t, "")
	in := newTestIntake(t, st, 10)
	in.maxBytes = 1024
	body := []byte(`{"pad":"` + strings.Repeat("x", 2000) + `"}`)
	rec := deliver(in, "POST", "pull_request", "big", sign(testSecret, body), body)
	require.Equal(t, 413, rec.Code)
	n, _ := st.CountQueued(context.Background())
	require.Zero(t, n)
	require.EqualValues(t, 25<<20, newTestIntake(t, st, 1).maxBytes, "the default limit is 25 MiB")
	require.EqualValues(t, serverconfig.DefaultMaxWebhookBytes, MaxDeliveryBytes, "the limit serverconfig documents is the intake's")
}

func TestNewIntakeRefusesNoSecret(t *testing.T) {
	_, err := NewIntake(serverconfig.Secret{}, storeopen.Bolt(t, ""), nil, 1, logctx.Logger(context.Background()), nil)
	require.ErrorContains(t, err, "refuses unsigned webhooks")
	_, err = NewIntake(nil, storeopen.Bolt(t, ""), nil, 1, logctx.Logger(context.Background()), nil)
	require.ErrorContains(t, err, "refuses unsigned webhooks", "no secret at all")
}

func FuzzIntake(f *testing.F) {
	f.Add("pull_request", "d1", []byte(`{"action":"opened"}`), true)
	f.Add("ping", "d2", []byte(`{}`), true)
	f.Add("pull_request", "", []byte(`not json`), false)
	st := storeopen.Bolt(f, "")
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

// unreadBody fails the test when the intake reads a body it should have
// refused from the headers alone.
type unreadBody struct{ t *testing.T }

func (u unreadBody) Read([]byte) (int, error) {
	u.t.Error("the body was read")
	return 0, io.EOF
}

func TestIntakeRefusesFromTheHeaders(t *testing.T) {
	tests := []struct {
		name      string
		length    int64
		signature string
		code      int
		reason    string
	}{
		{"declared length over the limit", MaxDeliveryBytes + 1, forgedSignature, 413, "larger than 25 MiB"},
		{"no signature", 100, "", 401, "X-Hub-Signature-256"},
		{"signature not hex", 100, "sha256=zz", 401, "does not match"},
		{"signature too short", 100, "sha256=00", 401, "does not match"},
		{"sha1 signature", 100, "sha1=" + strings.Repeat("0", 40), 401, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newTestIntake(t, storeopen.Bolt(t, ""), 10)
			req := httptest.NewRequest("POST", "/webhook", unreadBody{t})
			req.ContentLength = tt.length
			req.Header.Set("X-GitHub-Event", "pull_request")
			req.Header.Set("X-GitHub-Delivery", "d")
			if tt.signature != "" {
				req.Header.Set("X-Hub-Signature-256", tt.signature)
			}
			rec := httptest.NewRecorder()
			in.ServeHTTP(rec, req)
			require.Equal(t, tt.code, rec.Code, rec.Body.String())
			require.Contains(t, rec.Body.String(), tt.reason)
		})
	}
}

func TestIntakeBodyLimitWithoutLength(t *testing.T) {
	in := newTestIntake(t, storeopen.Bolt(t, ""), 10)
	in.maxBytes = 1024
	body := []byte(`{"pad":"` + strings.Repeat("x", 2000) + `"}`)
	req := httptest.NewRequest("POST", "/webhook", io.MultiReader(bytes.NewReader(body))) // length unknown: chunked
	req.ContentLength = -1
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", "chunked")
	req.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
	rec := httptest.NewRecorder()
	in.ServeHTTP(rec, req)
	require.Equal(t, 413, rec.Code, rec.Body.String())
	requireGateEmpty(t, in)
}

// pipedDelivery starts a delivery whose body the test writes through the
// returned pipe; the answer arrives on the channel.
func pipedDelivery(in http.Handler, event, delivery, signature string) (*io.PipeWriter, <-chan *httptest.ResponseRecorder) {
	pr, pw := io.Pipe()
	req := httptest.NewRequest("POST", "/webhook", pr)
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", signature)
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		in.ServeHTTP(rec, req)
		pr.CloseWithError(io.ErrUnexpectedEOF) // a writer still blocked sees the request end
		done <- rec
	}()
	return pw, done
}

func padded(n int) []byte { return []byte(`{"pad":"` + strings.Repeat("x", n-10) + `"}`) }

func requireGateEmpty(t *testing.T, in *Intake) {
	t.Helper()
	require.Zero(t, len(in.gate.slots), "every slot is given back")
	require.Zero(t, in.gate.budget.used.Load(), "every budgeted byte is given back")
}

func TestIntakeBodiesInFlightBound(t *testing.T) {
	st := storeopen.Bolt(t, "")
	in := newTestIntake(t, st, 10)
	in.gate.slots = make(chan struct{}, 1)
	body := padded(100)
	pw, first := pipedDelivery(in, "pull_request", "slow", sign(testSecret, body))
	_, err := pw.Write(body[:50]) // returns once the intake is reading: it holds the slot
	require.NoError(t, err)

	rec := deliver(in, "POST", "pull_request", "other", sign(testSecret, body), body)
	require.Equal(t, 503, rec.Code)
	require.Contains(t, rec.Body.String(), "too many webhook bodies")
	require.Equal(t, "10", rec.Header().Get("Retry-After"))

	_, err = pw.Write(body[50:])
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.Equal(t, 202, (<-first).Code)
	require.Equal(t, 202, deliver(in, "POST", "pull_request", "other", sign(testSecret, body), body).Code, "the slot is free again")
	requireGateEmpty(t, in)
}

func TestIntakeLargeBodyBudget(t *testing.T) {
	st := storeopen.Bolt(t, "")
	in := newTestIntake(t, st, 10)
	in.gate.allowance = 16 << 10
	in.gate.budget.limit = 64 << 10

	tooLarge := padded(100 << 10) // needs 88 KiB of the 64 KiB budget
	rec := deliver(in, "POST", "pull_request", "too-large", sign(testSecret, tooLarge), tooLarge)
	require.Equal(t, 503, rec.Code)
	require.Contains(t, rec.Body.String(), "too many large webhook bodies")
	requireGateEmpty(t, in)

	held := padded(60 << 10) // 48 KiB of the budget while it is held open
	pw, first := pipedDelivery(in, "pull_request", "held", sign(testSecret, held))
	_, err := pw.Write(held[:len(held)-1])
	require.NoError(t, err)

	second := padded(40 << 10) // needs 24 KiB more: over the budget while the first is held
	rec = deliver(in, "POST", "pull_request", "second", sign(testSecret, second), second)
	require.Equal(t, 503, rec.Code, rec.Body.String())
	small := padded(10 << 10) // within its own allowance: the budget does not matter
	require.Equal(t, 202, deliver(in, "POST", "pull_request", "small", sign(testSecret, small), small).Code)

	_, err = pw.Write(held[len(held)-1:])
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.Equal(t, 202, (<-first).Code)
	require.Equal(t, 202, deliver(in, "POST", "pull_request", "second", sign(testSecret, second), second).Code)
	requireGateEmpty(t, in)

	for _, want := range [][]byte{small, held, second} {
		job, err := st.Claim(context.Background(), "w")
		require.NoError(t, err)
		require.Equal(t, want, job.Payload, "the body queued is the body signed")
	}
}

func TestIntakeHashesUnkeptBodiesWithoutHoldingThem(t *testing.T) {
	in := newTestIntake(t, storeopen.Bolt(t, ""), 10)
	in.gate.allowance = chunkSize
	in.gate.budget.limit = 0 // a kept body over one chunk is refused
	big := padded(1 << 20)
	tests := []struct {
		name, event, delivery, signature string
		code                             int
		reason                           string
	}{
		{"kept body over the allowance", "pull_request", "d", sign(testSecret, big), 503, "large webhook bodies"},
		{"unhandled event", "star", "d", sign(testSecret, big), 202, "ignored"},
		{"ping", "ping", "d", sign(testSecret, big), 200, "pong"},
		{"no delivery id", "pull_request", "", sign(testSecret, big), 400, "X-GitHub-Delivery"},
		{"unhandled event, forged", "star", "d", forgedSignature, 401, "does not match"},
		{"forged, one byte changed", "star", "d", sign(testSecret, append([]byte{'['}, big[1:]...)), 401, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := deliver(in, "POST", tt.event, tt.delivery, tt.signature, big)
			require.Equal(t, tt.code, rec.Code, rec.Body.String())
			require.Contains(t, rec.Body.String(), tt.reason)
			requireGateEmpty(t, in)
		})
	}
}

// TestIntakeCutsTrickledBodies talks to a real server: a body that stops
// arriving is answered 408 once the grace and the minimum rate run out, not
// held until the request timeout.
func TestIntakeCutsTrickledBodies(t *testing.T) {
	in := newTestIntake(t, storeopen.Bolt(t, ""), 10)
	in.gate.grace = 50 * time.Millisecond
	srv := httptest.NewUnstartedServer(in)
	srv.Config = NewHTTPServer("", in)
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /webhook HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: pull_request\r\nX-GitHub-Delivery: d\r\n"+
		"X-Hub-Signature-256: "+forgedSignature+"\r\nContent-Length: 1000\r\n\r\n{")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(DefaultReadTimeout/2))) // the server must answer well before its request timeout
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	require.Contains(t, string(b), "too slowly")
	requireGateEmpty(t, in)
}

func TestNewHTTPServer(t *testing.T) {
	srv := NewHTTPServer(":8080", http.NotFoundHandler())
	require.Equal(t, ":8080", srv.Addr)
	require.Equal(t, DefaultReadHeaderTimeout, srv.ReadHeaderTimeout)
	require.Equal(t, DefaultReadTimeout, srv.ReadTimeout)
	require.Equal(t, DefaultIdleTimeout, srv.IdleTimeout)
	require.Equal(t, DefaultMaxHeaderBytes, srv.MaxHeaderBytes)
	require.Greater(t, srv.WriteTimeout, srv.ReadTimeout, "the write deadline runs from the end of the headers, through the body")
	require.LessOrEqual(t, srv.ReadTimeout, 10*time.Second, "GitHub gives up on a delivery after 10 s")
}
