package coord_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

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
		opt      coord.Option
		read     string // errorCode of a producer-routing read, "" = allowed
		monitor  string // errorCode of a monitoring read
		scale    string // errorCode of a scale
		outcome  string // audit outcome of the scale
		password string
	}{
		{name: "WRITE basic", opt: coord.WithBasicAuth("tf", "tf-secret-pw"), outcome: "SUCCESS", password: "tf-secret-pw"},
		{name: "WRITE bearer", opt: coord.WithBearerLogin("tf", "tf-secret-pw"), outcome: "SUCCESS", password: "tf-secret-pw"},
		{name: "READ reads producer routing (DIFF) but cannot scale", opt: coord.WithBasicAuth("viewer", "viewer-secret-pw"),
			scale: coord.CodeForbidden, outcome: "FORBIDDEN", password: "viewer-secret-pw"},
		{name: "MONITOR counts as READ", opt: coord.WithBearerLogin("grafana", "grafana-secret-pw"),
			scale: coord.CodeForbidden, outcome: "FORBIDDEN", password: "grafana-secret-pw"},
		{name: "MEMBER only heartbeats", opt: coord.WithBasicAuth("consumer", "consumer-secret-pw"),
			read: coord.CodeForbidden, monitor: coord.CodeForbidden, scale: coord.CodeForbidden, outcome: "FORBIDDEN", password: "consumer-secret-pw"},
		{name: "wrong password", opt: coord.WithBasicAuth("tf", "wrong-secret-pw"),
			read: coord.CodeUnauthorized, monitor: coord.CodeUnauthorized, scale: coord.CodeUnauthorized, outcome: "UNAUTHORIZED", password: "wrong-secret-pw"},
		{name: "wrong password bearer", opt: coord.WithBearerLogin("tf", "wrong-secret-pw"),
			read: coord.CodeUnauthorized, monitor: coord.CodeUnauthorized, scale: coord.CodeUnauthorized, password: "wrong-secret-pw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, users, coord.WithBasicAuth("tf", "tf-secret-pw"))
			mustCreate(t, e, "orders", "billing", 4)
			var logs bytes.Buffer
			logger := logrus.New()
			logger.SetOutput(&logs)
			logger.SetLevel(logrus.DebugLevel)
			c := e.newClient(t, tt.opt, coord.WithLogger(logrus.NewEntry(logger)))
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

func TestBearerTokenReused(t *testing.T) {
	e := newEnv(t, nil, coord.WithBearerLogin("admin", "password"))
	mustCreate(t, e, "orders", "billing", 4)
	for i := 0; i < 3; i++ {
		_, err := e.client.Group(context.Background(), "orders", "billing")
		require.NoError(t, err)
	}
	require.Len(t, e.requests(http.MethodPost, "/coord/v1/auth/login"), 1)
	tokens := map[string]bool{}
	for _, r := range e.requests(http.MethodGet, "/coord/v1/streams/orders/groups/billing") {
		tokens[r.auth] = true
	}
	require.Len(t, tokens, 1)
}

func TestFailedLoginIsNotRetried(t *testing.T) {
	e := newEnv(t, nil)
	c := e.newClient(t, coord.WithBearerLogin("admin", "not-the-password"))
	sleeps := recordSleeps(c)
	_, err := c.Groups(context.Background())
	require.True(t, coord.IsCode(err, coord.CodeUnauthorized), "%v", err)
	require.Len(t, e.requests(http.MethodPost, "/coord/v1/auth/login"), 1)
	require.Empty(t, e.requests(http.MethodGet, "/coord/v1/monitoring/groups"))
	require.Empty(t, *sleeps)
	require.NotContains(t, err.Error(), "not-the-password")
}
