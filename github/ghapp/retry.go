package ghapp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shardgate/shardgate/internal/retry"
)

// Defaults of the GitHub retry transport.
const (
	DefaultRetryAttempts = 5
	DefaultRetryBase     = 500 * time.Millisecond
	DefaultRetryMaxWait  = 60 * time.Second
	// DefaultGitHubTimeout bounds one attempt of a GitHub call, body included: a
	// call that never answers must not hold a worker.
	DefaultGitHubTimeout = 2 * time.Minute
)

// RetryTransport is shardgate's one retry policy for GitHub. It retries what
// GitHub did not act on — secondary rate limits (403 or 429 with Retry-After or
// a "secondary rate limit" message) — for every method, and 5xx answers and
// connection errors only for idempotent requests, with exponential backoff and
// jitter, honouring Retry-After. A POST cut off by a 5xx or a reset may have
// been done: a creation (comment, check run) is looked up by its marker or
// external_id when its job is retried, never repeated blind. Primary rate-limit
// exhaustion (x-ratelimit-remaining: 0) is not retried here: it can last an
// hour. Every attempt has its own deadline (Timeout), which covers the body.
type RetryTransport struct {
	Next     http.RoundTripper
	Attempts int
	Base     time.Duration
	MaxWait  time.Duration
	// Timeout bounds each attempt, reading the answer's body included.
	Timeout time.Duration
	// Sleep waits between attempts (nil: a timer, cut short when the
	// request's context ends); tests replace it.
	Sleep func(req *http.Request, d time.Duration) error
	// PassRateLimits returns a secondary rate-limit answer at once instead
	// of waiting for it in place: the caller waits without holding a worker
	// (the service postpones the job until Retry-After).
	PassRateLimits bool
	// Now is the clock Retry-After dates and rate-limit resets are read
	// against (nil: the wall clock); the service passes its own.
	Now func() time.Time
}

// NewRetryTransport wraps next with the default retry policy.
func NewRetryTransport(next http.RoundTripper) *RetryTransport {
	return &RetryTransport{Next: next, Attempts: DefaultRetryAttempts, Base: DefaultRetryBase, MaxWait: DefaultRetryMaxWait,
		Timeout: DefaultGitHubTimeout}
}

// idempotent says whether repeating req is harmless. PATCH sets fields to
// given values; a reaction GitHub already has is answered 200, not added
// again; a second installation token only replaces the first.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete, http.MethodPatch:
		return true
	case http.MethodPost:
		return strings.HasSuffix(req.URL.Path, "/reactions") || strings.HasSuffix(req.URL.Path, "/access_tokens")
	}
	return false
}

// attempt sends one try of r under its own deadline; the deadline is released
// when the caller closes the body.
func (t *RetryTransport) attempt(r *http.Request) (*http.Response, error) {
	if t.Timeout <= 0 {
		return t.Next.RoundTrip(r)
	}
	ctx, cancel := context.WithTimeout(r.Context(), t.Timeout)
	resp, err := t.Next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		if ctx.Err() == context.DeadlineExceeded && r.Context().Err() == nil {
			return nil, fmt.Errorf("%s %s: no answer within %s: %w", r.Method, r.URL.Path, t.Timeout, context.DeadlineExceeded)
		}
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (t *RetryTransport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *RetryTransport) sleep(req *http.Request, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(req, d)
	}
	return retry.Sleep(req.Context(), d)
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
		resp, err := t.attempt(r)
		if err != nil {
			// A request cut off may have been done: repeated only when idempotent.
			if attempt >= t.Attempts || !retry.Repeatable(idempotent(req), false) || req.Context().Err() != nil {
				return nil, err
			}
			if err := t.sleep(req, t.backoff(attempt)); err != nil {
				return nil, err
			}
			continue
		}
		if attempt >= t.Attempts {
			return resp, nil
		}
		if t.PassRateLimits && resp.StatusCode < 500 {
			if _, limited := limitAnswer(resp, t.now()); limited {
				return resp, nil
			}
		}
		wait, again := t.retryAfter(resp, attempt)
		// A 5xx may come after the request was done; a rate limit says it was not.
		if !again || wait > t.MaxWait || !retry.Repeatable(idempotent(req), resp.StatusCode < 500) {
			return resp, nil
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err := t.sleep(req, wait); err != nil {
			return nil, err
		}
	}
}

// backoff is Base doubled per attempt, plus up to a fifth of it: drawn from
// [d, 1.2d], that is 1.1d ± 0.1d.
func (t *RetryTransport) backoff(attempt int) time.Duration {
	return retry.Backoff{Initial: t.Base * 11 / 10, Jitter: 0.2 / 1.1}.Delay(attempt)
}

func (t *RetryTransport) retryAfter(resp *http.Response, attempt int) (time.Duration, bool) {
	backoff := t.backoff(attempt)
	ra := resp.Header.Get("Retry-After")
	switch {
	case resp.StatusCode >= 500:
		if d, ok := retry.ParseRetryAfter(ra, t.now()); ok {
			return d, true
		}
		return backoff, true
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusForbidden:
		if d, ok := retry.ParseRetryAfter(ra, t.now()); ok {
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

// isRateLimited is a 403 carrying GitHub's secondary-limit message.
func isRateLimited(resp *http.Response) bool {
	return resp.StatusCode == http.StatusForbidden && isSecondaryRateLimit(resp)
}
