package coord_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

// login sends a raw POST /auth/login through the contract transport (the
// client never logs in: it sends Basic credentials) and returns the status
// and, on 200, the decoded body.
func (e *env) login(t *testing.T, user, password string) (int, coordsim.LoginResponse) {
	t.Helper()
	body, err := json.Marshal(map[string]string{"username": user, "password": password})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/coord/v1/auth/login", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := (&http.Client{Transport: e.ct, Timeout: 5 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if password != "" {
		require.NotContains(t, string(raw), password, "a login answer never echoes the password")
	}
	var lr coordsim.LoginResponse
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal(raw, &lr))
	}
	return resp.StatusCode, lr
}

// bearerClient returns a contract-checked client whose calls carry token as
// a bearer credential.
func (e *env) bearerClient(t *testing.T, token string, opts ...coord.Option) *coord.Client {
	t.Helper()
	bearer := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return e.ct.RoundTrip(r)
	})}
	return e.newClient(t, append([]coord.Option{coord.WithHTTPClient(bearer)}, opts...)...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestAuth(t *testing.T) {
	users := []coordsim.Option{coordsim.WithUsers(
		coordsim.User{Name: "tf", Password: "tf-secret-pw", Roles: []coordsim.Role{coordsim.RoleWrite}},
		coordsim.User{Name: "viewer", Password: "viewer-secret-pw", Roles: []coordsim.Role{coordsim.RoleRead}},
		coordsim.User{Name: "grafana", Password: "grafana-secret-pw", Roles: []coordsim.Role{coordsim.RoleMonitor}},
		coordsim.User{Name: "consumer", Password: "consumer-secret-pw", Roles: []coordsim.Role{coordsim.RoleMember}},
	)}
	scale := coord.ScaleRequest{TargetShardCount: 8, RequestedBy: "x", Reason: "y"}
	tests := []struct {
		name     string
		user     string
		bearer   bool   // log in for a token and call with it, instead of Basic
		read     string // errorCode of a producer-routing read, "" = allowed
		monitor  string // errorCode of a monitoring read
		scale    string // errorCode of a scale
		outcome  string // audit outcome of the scale
		password string
	}{
		{name: "WRITE basic", user: "tf", outcome: "SUCCESS", password: "tf-secret-pw"},
		{name: "WRITE bearer", user: "tf", bearer: true, outcome: "SUCCESS", password: "tf-secret-pw"},
		{name: "READ reads producer routing (DIFF) but cannot scale", user: "viewer",
			scale: coord.CodeForbidden, outcome: "FORBIDDEN", password: "viewer-secret-pw"},
		{name: "MONITOR counts as READ", user: "grafana", bearer: true,
			scale: coord.CodeForbidden, outcome: "FORBIDDEN", password: "grafana-secret-pw"},
		{name: "MEMBER only heartbeats", user: "consumer",
			read: coord.CodeForbidden, monitor: coord.CodeForbidden, scale: coord.CodeForbidden, outcome: "FORBIDDEN", password: "consumer-secret-pw"},
		{name: "wrong password", user: "tf",
			read: coord.CodeUnauthorized, monitor: coord.CodeUnauthorized, scale: coord.CodeUnauthorized, outcome: "UNAUTHORIZED", password: "wrong-secret-pw"},
		{name: "wrong password bearer: no token, and a made-up one is refused", user: "tf", bearer: true,
			read: coord.CodeUnauthorized, monitor: coord.CodeUnauthorized, scale: coord.CodeUnauthorized, outcome: "UNAUTHORIZED", password: "wrong-secret-pw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, users, coord.WithBasicAuth("tf", "tf-secret-pw"))
			mustCreate(t, e, "orders", "billing", 4)
			var logs bytes.Buffer
			logger := logrus.New()
			logger.SetOutput(&logs)
			logger.SetLevel(logrus.DebugLevel)
			withLogs := coord.WithLogger(logrus.NewEntry(logger))
			c := e.newClient(t, coord.WithBasicAuth(tt.user, tt.password), withLogs)
			if tt.bearer {
				status, lr := e.login(t, tt.user, tt.password)
				token := lr.AccessToken
				if tt.read == coord.CodeUnauthorized {
					require.Equal(t, http.StatusUnauthorized, status)
					require.Empty(t, token)
					token = "made-up.token"
				} else {
					require.Equal(t, http.StatusOK, status)
					require.NotEmpty(t, token)
				}
				c = e.bearerClient(t, token, withLogs)
			}
			ctx := context.Background()
			var errs []error
			check := func(err error, want string) {
				errs = append(errs, err)
				if want == "" {
					require.NoError(t, err)
				} else {
					require.True(t, coord.IsCode(err, want), "want %s, got %v", want, err)
				}
			}
			_, err := c.ProducerRouting(ctx, "orders", "billing")
			check(err, tt.read)
			_, err = c.Groups(ctx)
			check(err, tt.monitor)
			_, err = c.ScaleStream(ctx, "orders", scale)
			check(err, tt.scale)
			if tt.outcome != "" {
				ev := e.sim.Audit()
				last := ev[len(ev)-1]
				require.Equal(t, coordsim.ActionScaleStream, last.Action)
				require.Equal(t, tt.outcome, last.Outcome)
			}

			// Secrets never reach errors or logs.
			secrets := []string{tt.password, base64.StdEncoding.EncodeToString([]byte("tf:" + tt.password))}
			for _, r := range e.requests(http.MethodGet, "/coord/v1/monitoring/groups") {
				if tok, ok := strings.CutPrefix(r.auth, "Bearer "); ok {
					secrets = append(secrets, tok)
				}
			}
			for _, s := range secrets {
				require.NotContains(t, logs.String(), s)
				for _, err := range errs {
					if err != nil {
						require.NotContains(t, err.Error(), s)
					}
				}
			}
		})
	}
}

// A token from one login serves any number of calls, as the role it was
// issued for, until it expires by the simulator's clock.
func TestLoginTokenServesCallsUntilItExpires(t *testing.T) {
	e := newEnv(t, nil)
	mustCreate(t, e, "orders", "billing", 4)
	status, lr := e.login(t, "admin", "password")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "Bearer", lr.TokenType)
	require.Equal(t, e.clock.Now().Add(coordsim.DefaultTokenTTL).Truncate(time.Second), lr.ExpiresAt.UTC())
	c := e.bearerClient(t, lr.AccessToken, coord.WithRetry(1, 0))
	for i := 0; i < 3; i++ {
		_, err := c.Group(context.Background(), "orders", "billing")
		require.NoError(t, err)
	}
	e.clock.Advance(coordsim.DefaultTokenTTL)
	_, err := c.Group(context.Background(), "orders", "billing")
	require.True(t, coord.IsCode(err, coord.CodeUnauthorized), "an expired token: %v", err)
}

// A failed login answers 401 with no body and no token, whatever the
// credentials look like.
func TestFailedLoginAnswers401(t *testing.T) {
	e := newEnv(t, nil)
	for _, creds := range [][2]string{{"admin", "not-the-password"}, {"nobody", "password"}, {"", ""}} {
		status, lr := e.login(t, creds[0], creds[1])
		require.Equal(t, http.StatusUnauthorized, status, creds[0])
		require.Empty(t, lr.AccessToken)
	}
	require.Len(t, e.requests(http.MethodPost, "/coord/v1/auth/login"), 3)
}
