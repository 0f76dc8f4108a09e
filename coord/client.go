// Package coord talks to the Redis Stream Coordinator: a typed HTTP client, a
// per-stream view for the bot (Stream, Preflight, WaitConverged) and, in
// coord/coordsim, a simulator that follows docs/coordinator.md.
package coord

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// Defaults for the client's tunables.
const (
	DefaultTimeout      = 15 * time.Second
	DefaultMaxAttempts  = 4
	DefaultRetryDelay   = 250 * time.Millisecond
	DefaultMaxDelay     = 30 * time.Second
	DefaultPollInterval = 2 * time.Second
	DefaultUserAgent    = "shardgate-coord/1"
	apiPrefix           = "/coord/v1"
)

// Client calls one coordinator. It is safe for concurrent use.
type Client struct {
	base         string // scheme://host[:port][/path]/coord/v1, no trailing slash
	hc           *http.Client
	basic        *basicAuth // nil: no credentials
	timeout      time.Duration
	maxAttempts  int
	baseDelay    time.Duration
	maxDelay     time.Duration
	pollInterval time.Duration
	log          *logrus.Entry
	userAgent    string
	newID        func() string
	versions     VersionMemory
	sleep        func(d time.Duration) <-chan time.Time
	now          func() time.Time
}

// Option tunes a Client.
type Option func(*Client)

// basicAuth is the user and password every call sends.
type basicAuth struct{ user, password string }

// WithBasicAuth sends Authorization: Basic on every call. (The coordinator
// also takes bearer tokens from POST /auth/login; shardgate has no use for
// them: a Basic credential does not expire mid-apply.)
func WithBasicAuth(user, password string) Option {
	return func(c *Client) { c.basic = &basicAuth{user: user, password: password} }
}

// WithHTTPClient replaces the HTTP client (its Timeout is left alone; per-attempt
// timeouts come from WithTimeout).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithTimeout bounds each attempt (not the whole call with its retries).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithRetry sets the attempt budget (1 = no retry) and the first backoff delay.
func WithRetry(maxAttempts int, baseDelay time.Duration) Option {
	return func(c *Client) {
		if maxAttempts < 1 {
			maxAttempts = 1
		}
		c.maxAttempts = maxAttempts
		c.baseDelay = baseDelay
	}
}

// WithLogger sets the logger; calls are logged at debug level, retries at info.
func WithLogger(l *logrus.Entry) Option {
	return func(c *Client) {
		if l != nil {
			c.log = l
		}
	}
}

// WithUserAgent sets the User-Agent header (it shows in the coordinator's audit).
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithPollInterval sets how often WaitConverged polls (DefaultPollInterval).
// The service keeps the default; the tests that converge against the
// simulator poll faster.
func WithPollInterval(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.pollInterval = d
		}
	}
}

// WithVersionMemory sets where the highest metadataVersion seen per group is
// kept (default: in memory, per Client).
func WithVersionMemory(m VersionMemory) Option {
	return func(c *Client) {
		if m != nil {
			c.versions = m
		}
	}
}

// WithClock sets the clock an HTTP-date Retry-After is read against (default
// the wall clock): the service passes its own.
func WithClock(now func() time.Time) Option {
	return func(c *Client) {
		if now != nil {
			c.now = now
		}
	}
}

// New returns a client for the coordinator at baseURL (http://host:port; a base
// already ending in /coord/v1 is accepted too).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, errors.New("parse coordinator base URL: invalid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("parse coordinator base URL: want http(s)://host[:port], got scheme %q", u.Scheme)
	}
	if u.User != nil {
		// Credentials in the URL would leak into every error message.
		return nil, errors.New("parse coordinator base URL: credentials in the URL are not allowed; use WithBasicAuth")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("parse coordinator base URL: query and fragment are not allowed")
	}
	path := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(path, apiPrefix) {
		path += apiPrefix
	}
	c := &Client{
		base:         u.Scheme + "://" + u.Host + path,
		hc:           &http.Client{},
		timeout:      DefaultTimeout,
		maxAttempts:  DefaultMaxAttempts,
		baseDelay:    DefaultRetryDelay,
		maxDelay:     DefaultMaxDelay,
		pollInterval: DefaultPollInterval,
		log:          logrus.NewEntry(discardLogger()),
		userAgent:    DefaultUserAgent,
		newID:        NewRequestID,
		versions:     NewMemoryVersions(),
		sleep:        time.After,
		now:          time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL returns the API base the client calls (ending in /coord/v1).
func (c *Client) BaseURL() string { return c.base }

func discardLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}
