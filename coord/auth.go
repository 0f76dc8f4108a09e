package coord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// tokenRefreshMargin is how long before expiry a bearer token is replaced, so a
// call never starts with a token about to lapse.
const tokenRefreshMargin = 5 * time.Minute

// authenticator adds credentials to a request. invalidate drops cached
// credentials and reports whether a fresh attempt could succeed.
type authenticator interface {
	apply(ctx context.Context, c *Client, req *http.Request, requestID string) error
	invalidate() bool
}

type noAuth struct{}

func (noAuth) apply(context.Context, *Client, *http.Request, string) error { return nil }
func (noAuth) invalidate() bool                                            { return false }

type basicAuth struct{ user, password string }

func (b *basicAuth) apply(_ context.Context, _ *Client, req *http.Request, _ string) error {
	req.SetBasicAuth(b.user, b.password)
	return nil
}
func (b *basicAuth) invalidate() bool { return false }

// bearerAuth logs in once and shares the token between goroutines.
type bearerAuth struct {
	user, password string

	mu      sync.Mutex
	token   string
	expires time.Time
}

func (b *bearerAuth) apply(ctx context.Context, c *Client, req *http.Request, requestID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.token == "" || time.Until(b.expires) < tokenRefreshMargin {
		if err := b.login(ctx, c, requestID); err != nil {
			return err
		}
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	return nil
}

func (b *bearerAuth) invalidate() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	had := b.token != ""
	b.token = ""
	return had
}

func (b *bearerAuth) login(ctx context.Context, c *Client, requestID string) error {
	const path = "/auth/login"
	payload, err := json.Marshal(map[string]string{"username": b.user, "password": b.password})
	if err != nil {
		return fmt.Errorf("encode login request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("build login request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Request-Id", requestID)
	req.Header.Set("User-Agent", c.userAgent)
	hr, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("log in to coordinator: %w", err)
	}
	defer hr.Body.Close()
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("read login response: %w", err)
	}
	if hr.StatusCode != http.StatusOK {
		return newAPIError(http.MethodPost, path, requestID, &response{status: hr.StatusCode, body: body})
	}
	var lr LoginResponse
	if err := json.Unmarshal(body, &lr); err != nil {
		return fmt.Errorf("decode login response: %w", err)
	}
	if lr.AccessToken == "" {
		return errNoToken
	}
	b.token = lr.AccessToken
	b.expires = lr.ExpiresAt
	if b.expires.IsZero() && lr.ExpiresInSeconds > 0 {
		b.expires = time.Now().Add(time.Duration(lr.ExpiresInSeconds) * time.Second)
	}
	if b.expires.IsZero() {
		b.expires = time.Now().Add(tokenRefreshMargin + time.Minute)
	}
	return nil
}
