package bot

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of the GitHub retry transport.
const (
	DefaultRetryAttempts = 5
	DefaultRetryBase     = 500 * time.Millisecond
	DefaultRetryMaxWait  = 60 * time.Second
)

// RetryTransport retries GitHub's secondary rate limits (403 or 429 with
// Retry-After or a "secondary rate limit" message) and 5xx answers with
// exponential backoff and jitter, honouring Retry-After. Primary rate-limit
// exhaustion (x-ratelimit-remaining: 0) is not retried here: it can last an hour.
type RetryTransport struct {
	Next     http.RoundTripper
	Attempts int
	Base     time.Duration
	MaxWait  time.Duration
	// Sleep waits between attempts; tests replace it.
	Sleep func(req *http.Request, d time.Duration) error
}

// NewRetryTransport wraps next with the default retry policy.
func NewRetryTransport(next http.RoundTripper) *RetryTransport {
	return &RetryTransport{Next: next, Attempts: DefaultRetryAttempts, Base: DefaultRetryBase, MaxWait: DefaultRetryMaxWait, Sleep: sleepCtx}
}

func sleepCtx(req *http.Request, d time.Duration) error { return sleepFor(req.Context(), d) }

// sleepFor waits d or until ctx ends, whichever comes first.
func sleepFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RoundTrip sends req, retrying what GitHub says is worth retrying.
func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.GetBody == nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 || body != nil {
			r = req.Clone(req.Context())
			switch {
			case body != nil:
				r.Body = io.NopCloser(bytes.NewReader(body))
			case req.GetBody != nil:
				b, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = b
			}
		}
		resp, err := t.Next.RoundTrip(r)
		if err != nil || attempt >= t.Attempts {
			return resp, err
		}
		wait, retry := t.retryAfter(resp, attempt)
		if !retry || wait > t.MaxWait {
			return resp, nil
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err := t.Sleep(req, wait); err != nil {
			return nil, err
		}
	}
}

func (t *RetryTransport) retryAfter(resp *http.Response, attempt int) (time.Duration, bool) {
	backoff := t.Base << (attempt - 1)
	backoff += time.Duration(rand.Float64() * 0.2 * float64(backoff))
	ra := resp.Header.Get("Retry-After")
	switch {
	case resp.StatusCode >= 500:
		if d, ok := parseRetryAfter(ra); ok {
			return d, true
		}
		return backoff, true
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusForbidden:
		if d, ok := parseRetryAfter(ra); ok {
			return d, true
		}
		if resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-Ratelimit-Remaining") == "0" {
			return 0, false
		}
		if isSecondaryRateLimit(resp) {
			return backoff + time.Minute/10, true
		}
	}
	return 0, false
}

// isSecondaryRateLimit peeks at a 403/429 body for GitHub's wording, putting
// the body back for the caller.
func isSecondaryRateLimit(resp *http.Response) bool {
	if resp.StatusCode == http.StatusTooManyRequests {
		return true
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return strings.Contains(strings.ToLower(string(b)), "secondary rate limit")
}

func parseRetryAfter(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}
