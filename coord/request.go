package coord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/shardgate/shardgate/internal/retry"
)

const maxResponseBytes = 8 << 20

// response is one attempt's outcome.
type response struct {
	status     int
	body       []byte
	retryAfter time.Duration
}

// do runs one logical call: the same X-Request-Id on every attempt, retries with
// backoff for what the coordinator calls safe to repeat (IsRetryable), and for
// transport errors only when the call is an idempotent GET.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	id, ok := RequestIDFrom(ctx)
	if !ok {
		id = c.newID()
	}
	var payload []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s request: %w", method, path, err)
		}
		payload = b
	}
	idempotent := method == http.MethodGet
	var prev error // the last retried failure, to explain what a retry ran into
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, method, path, payload, id)
		var retryAfter time.Duration
		switch {
		case err != nil:
			// Cut off, the call may have been done: repeated only when idempotent.
			if ctx.Err() != nil || !retry.Repeatable(idempotent, false) {
				return withEarlier(err, prev)
			}
		case resp.status >= 200 && resp.status < 300:
			if out == nil || len(resp.body) == 0 {
				return nil
			}
			if err := json.Unmarshal(resp.body, out); err != nil {
				return fmt.Errorf("decode coordinator %s %s response: %w", method, path, err)
			}
			return nil
		default:
			apiErr := newAPIError(method, path, id, resp)
			if !IsRetryable(apiErr) {
				return withEarlier(apiErr, prev)
			}
			err = apiErr
			retryAfter = resp.retryAfter
		}
		prev = err
		if attempt >= c.maxAttempts {
			return fmt.Errorf("call coordinator after %d attempts: %w", attempt, err)
		}
		delay := c.backoff(attempt, retryAfter)
		c.log.WithFields(map[string]any{
			"method": method, "path": path, "request_id": id, "attempt": attempt, "delay": delay.String(),
		}).Info("coordinator call failed, retrying: " + err.Error())
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait to retry %s %s: %w (last error: %v)", method, path, ctx.Err(), err)
		case <-c.sleep(delay):
		}
	}
}

// attempt sends one request and reads the whole response.
func (c *Client) attempt(ctx context.Context, method, path string, payload []byte, id string) (*response, error) {
	actx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("build %s %s request: %w", method, path, err)
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Request-Id", id)
	req.Header.Set("User-Agent", c.userAgent)
	if c.basic != nil {
		req.SetBasicAuth(c.basic.user, c.basic.password)
	}
	start := time.Now()
	hr, err := c.hc.Do(req)
	if err != nil {
		// url.Error names the URL, which never carries credentials (New refuses them).
		return nil, fmt.Errorf("call coordinator %s %s: %w", method, path, err)
	}
	defer hr.Body.Close()
	b, err := io.ReadAll(io.LimitReader(hr.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("read coordinator %s %s response: %w", method, path, err)
	}
	c.log.WithFields(map[string]any{
		"method": method, "path": path, "status": hr.StatusCode, "request_id": id,
		"duration_ms": time.Since(start).Milliseconds(),
	}).Debug("coordinator call")
	return &response{status: hr.StatusCode, body: b, retryAfter: c.retryAfter(hr.Header.Get("Retry-After"))}, nil
}

func newAPIError(method, path, id string, r *response) *APIError {
	e := &APIError{HTTPStatus: r.status, Status: statusName(r.status), RequestID: id, Method: method, Path: path}
	var eb ErrorBody
	if json.Unmarshal(r.body, &eb) == nil && eb.ErrorCode != "" {
		e.ErrorCode, e.Message = eb.ErrorCode, eb.Message
		if eb.Status != "" {
			e.Status = eb.Status
		}
		return e
	}
	switch r.status {
	case http.StatusUnauthorized:
		e.ErrorCode = CodeUnauthorized
	case http.StatusForbidden:
		e.ErrorCode = CodeForbidden
	default:
		e.ErrorCode = codeUnexpectedResponse
	}
	return e
}

// backoff is exponential with jitter, and never shorter than Retry-After:
// baseDelay doubled per attempt up to maxDelay gives d, and the pause is
// drawn from [d/2, d] ("equal jitter"), that is 3/4 d ± 1/4 d.
func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	base := c.baseDelay
	if base <= 0 {
		base = c.maxDelay
	}
	d := retry.Backoff{Initial: base * 3 / 4, Max: c.maxDelay * 3 / 4, Jitter: 2.0 / 3}.Delay(attempt)
	return max(d, retryAfter)
}

// retryAfter is a Retry-After header's wait (0 when none).
func (c *Client) retryAfter(v string) time.Duration {
	d, _ := retry.ParseRetryAfter(v, c.now())
	return d
}

// withEarlier keeps the cause visible when a retry runs into a different error,
// e.g. a scale retried after 503 REDIS_STREAM_PROVISIONING_FAILED that then gets
// 409 ACTIVE_MIGRATION_EXISTS because earlier groups are already ACTIVE.
func withEarlier(err, earlier error) error {
	if earlier == nil {
		return err
	}
	return fmt.Errorf("%w (after an earlier attempt failed: %v)", err, earlier)
}
