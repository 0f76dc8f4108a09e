package coord_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

// recordSleeps makes the client's retry waits instant and records them.
func recordSleeps(c *coord.Client) *[]time.Duration {
	var mu sync.Mutex
	var got []time.Duration
	coord.SetSleep(c, func(d time.Duration) <-chan time.Time {
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	})
	return &got
}

func TestNewBaseURL(t *testing.T) {
	tests := []struct {
		name, base, want, wantErr string
	}{
		{name: "host only", base: "http://127.0.0.1:8089", want: "http://127.0.0.1:8089/coord/v1"},
		{name: "trailing slash", base: "http://c.example/", want: "http://c.example/coord/v1"},
		{name: "already has the API prefix", base: "https://c.example/coord/v1/", want: "https://c.example/coord/v1"},
		{name: "behind a path", base: "https://c.example/rsc", want: "https://c.example/rsc/coord/v1"},
		{name: "no scheme", base: "c.example:8089", wantErr: "want http(s)"},
		{name: "credentials refused and not echoed", base: "http://admin:hunter2@c.example", wantErr: "credentials in the URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := coord.New(tt.base)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.NotContains(t, err.Error(), "hunter2")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, c.BaseURL())
		})
	}
}

func TestRetries(t *testing.T) {
	scale := coord.ScaleRequest{TargetShardCount: 8, RequestedBy: "bot", Reason: "retry test"}
	tests := []struct {
		name        string
		arm         func(s *coordsim.Sim)
		call        func(ctx context.Context, c *coord.Client) error
		method      string
		path        string
		wantErr     string // errorCode, "" = success
		wantCalls   int
		minDelay    time.Duration
		auditStatus []int // statuses of the SCALE_STREAM audit events, when audited
	}{
		{name: "429 honours Retry-After and keeps the request id",
			arm: func(s *coordsim.Sim) { s.RateLimitNext(2, 3*time.Second) },
			call: func(ctx context.Context, c *coord.Client) error {
				_, err := c.ScaleStream(ctx, "orders", scale)
				return err
			},
			method: http.MethodPost, path: "/coord/v1/streams/orders/scale", wantCalls: 3, minDelay: 3 * time.Second,
			auditStatus: []int{429, 429, 202}},
		{name: "503 terminating on a mutation is retried",
			arm: func(s *coordsim.Sim) { s.FailNext(1, http.StatusServiceUnavailable, coord.CodeCoordinatorTerminating) },
			call: func(ctx context.Context, c *coord.Client) error {
				_, err := c.ScaleStream(ctx, "orders", scale)
				return err
			},
			method: http.MethodPost, path: "/coord/v1/streams/orders/scale", wantCalls: 2, auditStatus: []int{503, 202}},
		{name: "503 on a read is retried",
			arm: func(s *coordsim.Sim) { s.FailNext(2, http.StatusServiceUnavailable, coord.CodeStateMutexUnavailable) },
			call: func(ctx context.Context, c *coord.Client) error {
				_, err := c.Group(ctx, "orders", "billing")
				return err
			},
			method: http.MethodGet, path: "/coord/v1/streams/orders/groups/billing", wantCalls: 3},
		{name: "409 STATE_VERSION_CONFLICT is retried",
			arm: func(s *coordsim.Sim) { s.FailNext(1, http.StatusConflict, coord.CodeStateVersionConflict) },
			call: func(ctx context.Context, c *coord.Client) error {
				_, err := c.ScaleStream(ctx, "orders", scale)
				return err
			},
			method: http.MethodPost, path: "/coord/v1/streams/orders/scale", wantCalls: 2},
		{name: "attempts are bounded",
			arm: func(s *coordsim.Sim) { s.FailNext(10, http.StatusServiceUnavailable, coord.CodeStateMutexUnavailable) },
			call: func(ctx context.Context, c *coord.Client) error {
				_, err := c.Group(ctx, "orders", "billing")
				return err
			},
			method: http.MethodGet, path: "/coord/v1/streams/orders/groups/billing", wantErr: coord.CodeStateMutexUnavailable, wantCalls: 4},
		{name: "no retry on 400",
			call: func(ctx context.Context, c *coord.Client) error {
				_, err := c.ScaleStream(ctx, "orders", coord.ScaleRequest{TargetShardCount: 8})
				return err
			},
			method: http.MethodPost, path: "/coord/v1/streams/orders/scale", wantErr: coord.CodeInvalidRequest, wantCalls: 1},
		{name: "no retry on 404",
			call: func(ctx context.Context, c *coord.Client) error {
				_, err := c.Group(ctx, "orders", "nope")
				return err
			},
			method: http.MethodGet, path: "/coord/v1/streams/orders/groups/nope", wantErr: coord.CodeGroupNotFound, wantCalls: 1},
		{name: "no retry on other 409",
			call: func(ctx context.Context, c *coord.Client) error {
				_, err := c.CreateGroup(ctx, "orders", "billing", coord.CreateRequest{RequestedBy: "bot"})
				return err
			},
			method: http.MethodPost, path: "/coord/v1/streams/orders/groups/billing", wantErr: coord.CodeGroupAlreadyExists, wantCalls: 1},
		{name: "no retry on 422",
			call: func(ctx context.Context, c *coord.Client) error {
				_, err := c.Rollback(ctx, "orders", "billing", "reshard-x", coord.RollbackRequest{RequestedBy: "bot", Reason: "r"})
				return err
			},
			method: http.MethodPost, path: "/coord/v1/streams/orders/groups/billing/migrations/reshard-x/rollback",
			wantErr: coord.CodeMigrationNotFound, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			mustCreate(t, e, "orders", "billing", 4)
			sleeps := recordSleeps(e.client)
			if tt.arm != nil {
				tt.arm(e.sim)
			}
			before := len(e.requests(tt.method, tt.path))
			ctx := coord.WithRequestID(context.Background(), "bot-run-42")
			err := tt.call(ctx, e.client)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.True(t, coord.IsCode(err, tt.wantErr), "want %s, got %v", tt.wantErr, err)
			}
			seen := e.requests(tt.method, tt.path)[before:]
			require.Len(t, seen, tt.wantCalls)
			for _, r := range seen {
				require.Equal(t, "bot-run-42", r.requestID, "the same X-Request-Id on every attempt")
			}
			require.Len(t, *sleeps, tt.wantCalls-1)
			for _, d := range *sleeps {
				require.GreaterOrEqual(t, d, tt.minDelay)
			}
			if tt.auditStatus != nil {
				var got []int
				for _, ev := range e.sim.Audit() {
					if ev.Action == coordsim.ActionScaleStream {
						got = append(got, ev.Status)
						require.Equal(t, "bot-run-42", ev.RequestID)
						if ev.Status == http.StatusTooManyRequests {
							require.Empty(t, ev.RequestedBy, "the rate limiter refuses before the body is read")
						} else {
							require.Equal(t, "bot", ev.RequestedBy)
						}
					}
				}
				require.Equal(t, tt.auditStatus, got)
			}
		})
	}
}

func TestRetryWaitEndsWithContext(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 4)
	coord.SetSleep(e.client, func(time.Duration) <-chan time.Time { return nil }) // never fires
	e.sim.FailNext(5, http.StatusServiceUnavailable, coord.CodeStateMutexUnavailable)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := e.client.Group(ctx, "orders", "billing")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, coord.CodeStateMutexUnavailable, "says what it was waiting to retry")
}

// flakyTransport fails the first n round trips before reaching the network.
type flakyTransport struct {
	n    int
	next http.RoundTripper
}

func (f *flakyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.n > 0 {
		f.n--
		return nil, errors.New("connection reset by peer")
	}
	return f.next.RoundTrip(r)
}

func TestTransportErrorsRetriedOnlyForReads(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 4)
	read := e.newClient(t, coord.WithBasicAuth("admin", "password"), coord.WithHTTPClient(&http.Client{Transport: &flakyTransport{n: 2, next: e.ct}}))
	recordSleeps(read)
	_, err := read.Group(context.Background(), "orders", "billing")
	require.NoError(t, err)

	write := e.newClient(t, coord.WithBasicAuth("admin", "password"), coord.WithHTTPClient(&http.Client{Transport: &flakyTransport{n: 1, next: e.ct}}))
	recordSleeps(write)
	_, err = write.ScaleStream(context.Background(), "orders", coord.ScaleRequest{TargetShardCount: 8, RequestedBy: "b", Reason: "r"})
	require.ErrorContains(t, err, "connection reset", "a mutation that may have landed is not repeated")
	require.Empty(t, e.requests(http.MethodPost, "/coord/v1/streams/orders/scale"))
}

func TestTimeoutPerAttempt(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 4)
	c := e.newClient(t, coord.WithBasicAuth("admin", "password"), coord.WithTimeout(30*time.Millisecond), coord.WithRetry(1, 0))
	e.sim.SetDelay(time.Second)
	_, err := c.Group(context.Background(), "orders", "billing")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	e.sim.SetDelay(0)
}

func TestAPIErrorHelpers(t *testing.T) {
	err := error(&coord.APIError{HTTPStatus: 409, Status: "CONFLICT", ErrorCode: coord.CodeActiveMigrationExists, Message: "busy", RequestID: "r1", Method: "POST", Path: "/streams/p/scale"})
	wrapped := errors.Join(errors.New("ctx"), err)
	require.True(t, coord.IsConflict(wrapped))
	require.True(t, coord.IsCode(wrapped, coord.CodeActiveMigrationExists))
	require.False(t, coord.IsNotFound(wrapped))
	require.False(t, coord.IsRetryable(wrapped))
	require.True(t, errors.Is(wrapped, &coord.APIError{ErrorCode: coord.CodeActiveMigrationExists}))
	require.Equal(t, "coordinator POST /streams/p/scale: 409 ACTIVE_MIGRATION_EXISTS: busy (request id r1)", err.Error())
	require.True(t, coord.IsRetryable(&coord.APIError{HTTPStatus: 409, ErrorCode: coord.CodeStateVersionConflict}))
}

func TestRetryIntoAnotherErrorKeepsTheCause(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "audit", 4)
	mustCreate(t, e, "orders", "billing", 4)
	recordSleeps(e.client)
	e.sim.FailNextProvisioning("orders", "billing")
	_, err := scaleTo(e, "orders", 8)
	require.True(t, coord.IsCode(err, coord.CodeActiveMigrationExists), "the retry meets the ACTIVE audit group: %v", err)
	require.ErrorContains(t, err, coord.CodeProvisioningFailed, "and the first failure is still named")
}
