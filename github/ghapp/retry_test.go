package ghapp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

func TestRetryTransport(t *testing.T) {
	type answer struct {
		status  int
		headers map[string]string
		body    string
	}
	tests := []struct {
		name      string
		answers   []answer
		wantCalls int
		wantCode  int
		wantWaits []time.Duration
		method    string // default PATCH: idempotent
	}{
		{"success at once", []answer{{200, nil, "ok"}}, 1, 200, nil, ""},
		{"secondary rate limit with retry-after", []answer{{403, map[string]string{"Retry-After": "3"}, `{"message":"You have exceeded a secondary rate limit"}`}, {200, nil, "ok"}},
			2, 200, []time.Duration{3 * time.Second}, ""},
		{"secondary rate limit by message", []answer{{403, nil, `{"message":"You have exceeded a secondary rate limit."}`}, {201, nil, "ok"}}, 2, 201, nil, ""},
		{"429", []answer{{429, map[string]string{"Retry-After": "1"}, ""}, {200, nil, "ok"}}, 2, 200, []time.Duration{time.Second}, ""},
		{"5xx backs off", []answer{{502, nil, ""}, {503, nil, ""}, {200, nil, "ok"}}, 3, 200, nil, ""},
		{"plain 403 is final", []answer{{403, nil, `{"message":"Resource not accessible by integration"}`}}, 1, 403, nil, ""},
		{"primary rate limit is not waited out here", []answer{{403, map[string]string{"X-Ratelimit-Remaining": "0"}, `{"message":"API rate limit exceeded"}`}}, 1, 403, nil, ""},
		{"404 is final", []answer{{404, nil, ""}}, 1, 404, nil, ""},
		{"gives up after the attempts", []answer{{500, nil, ""}, {500, nil, ""}, {500, nil, ""}}, 3, 500, nil, ""},
		{"retry-after beyond the bound is returned", []answer{{429, map[string]string{"Retry-After": "3600"}, ""}}, 1, 429, nil, ""},
		// A creation is looked up (marker comment, check run external_id), never repeated blind.
		{"POST is not retried on 5xx", []answer{{502, nil, ""}, {201, nil, "ok"}}, 1, 502, nil, http.MethodPost},
		{"POST is retried on a rate limit (GitHub did not act)", []answer{{429, map[string]string{"Retry-After": "1"}, ""}, {201, nil, "ok"}}, 2, 201, nil, http.MethodPost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			var bodies []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				bodies = append(bodies, string(b))
				a := tt.answers[min(int(calls.Add(1))-1, len(tt.answers)-1)]
				for k, v := range a.headers {
					w.Header().Set(k, v)
				}
				w.WriteHeader(a.status)
				io.WriteString(w, a.body)
			}))
			defer srv.Close()
			var waits []time.Duration
			rt := NewRetryTransport(http.DefaultTransport)
			rt.Attempts = 3
			rt.Sleep = func(_ *http.Request, d time.Duration) error { waits = append(waits, d); return nil }
			method := tt.method
			if method == "" {
				method = http.MethodPatch
			}
			req, err := http.NewRequest(method, srv.URL, strings.NewReader(`{"body":"same every time"}`))
			require.NoError(t, err)
			req.GetBody = nil // force the transport to buffer the body itself
			resp, err := rt.RoundTrip(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tt.wantCode, resp.StatusCode)
			require.EqualValues(t, tt.wantCalls, calls.Load())
			for _, b := range bodies {
				require.Equal(t, `{"body":"same every time"}`, b, "the body is replayed on every attempt")
			}
			if tt.wantWaits != nil {
				require.Equal(t, tt.wantWaits, waits)
			}
			if len(tt.answers) > 0 && tt.answers[len(tt.answers)-1].body != "" && resp.StatusCode == tt.answers[len(tt.answers)-1].status {
				b, _ := io.ReadAll(resp.Body)
				require.Equal(t, tt.answers[min(tt.wantCalls, len(tt.answers))-1].body, string(b), "the final body reaches the caller")
			}
		})
	}
}

func TestRetryTransportConnectionErrors(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			// A connection reset: hijack and close without an answer.
			conn, _, err := w.(http.Hijacker).Hijack()
			require.NoError(t, err)
			conn.Close()
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	newRT := func() *RetryTransport {
		rt := NewRetryTransport(http.DefaultTransport)
		rt.Sleep = func(_ *http.Request, d time.Duration) error { return nil }
		return rt
	}
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := newRT().RoundTrip(req)
	require.NoError(t, err, "a GET is retried after a connection reset")
	resp.Body.Close()
	require.EqualValues(t, 2, calls.Load())

	calls.Store(0)
	req, err = http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
	require.NoError(t, err)
	_, err = newRT().RoundTrip(req)
	require.Error(t, err, "a POST cut off may have been done: not repeated blind")
	require.EqualValues(t, 1, calls.Load())
}

func TestRetryTransportTimesOutACallThatNeverAnswers(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	rt := NewRetryTransport(http.DefaultTransport)
	rt.Attempts, rt.Timeout = 2, 100*time.Millisecond
	rt.Sleep = func(_ *http.Request, d time.Duration) error { return nil }
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	_, err = rt.RoundTrip(req)
	require.Error(t, err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.EqualValues(t, 2, calls.Load(), "each attempt has its own timeout")
}

func TestRetryTransportTimeoutCoversTheBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 1<<16))
	}))
	defer srv.Close()
	rt := NewRetryTransport(http.DefaultTransport)
	rt.Timeout = time.Minute
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the attempt's deadline lives until the body is closed")
	require.Len(t, b, 1<<16)
	require.NoError(t, resp.Body.Close())
}

// The pause after a failed attempt is Base doubled per attempt plus up to a
// fifth of it.
func TestRetryTransportBackoffBounds(t *testing.T) {
	rt := NewRetryTransport(http.DefaultTransport)
	rt.Base = time.Second
	for attempt, d := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second} {
		for range 200 {
			if got := rt.backoff(attempt); got < d || got > d*12/10 {
				t.Fatalf("attempt %d: pause %s outside [%s, %s]", attempt, got, d, d*12/10)
			}
		}
	}
}

// With PassRateLimits the caller waits for rate limits (the job is
// postponed) and the worker is not held; other failures are retried as ever.
func TestRetryTransportPassesRateLimitsToItsCaller(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		headers   map[string]string
		body      string
		wantCalls int32
	}{
		{"secondary with retry-after", 403, map[string]string{"Retry-After": "3"}, `{"message":"You have exceeded a secondary rate limit"}`, 1},
		{"secondary by message", 403, nil, `{"message":"You have exceeded a secondary rate limit."}`, 1},
		{"429", 429, map[string]string{"Retry-After": "1"}, "", 1},
		{"5xx is still retried", 502, nil, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			rt := NewRetryTransport(http.DefaultTransport)
			rt.Attempts, rt.PassRateLimits = 3, true
			rt.Sleep = func(*http.Request, time.Duration) error { return nil }
			req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			resp, err := rt.RoundTrip(req)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, tt.status, resp.StatusCode)
			require.Equal(t, tt.body, string(b), "the body reaches the caller")
			require.Equal(t, tt.wantCalls, calls.Load())
		})
	}
}

// A Retry-After date is a wait from the transport's clock, not the wall
// clock's now.
func TestRetryTransportReadsRetryAfterDatesOnItsClock(t *testing.T) {
	clock := fakeclock.New(time.Date(2101, 3, 4, 13, 30, 0, 0, time.UTC))
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", clock.Now().Add(2*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	var waits []time.Duration
	rt := NewRetryTransport(http.DefaultTransport)
	rt.Now = clock.Now
	rt.Sleep = func(_ *http.Request, d time.Duration) error { waits = append(waits, d); return nil }
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, []time.Duration{2 * time.Second}, waits)
}
