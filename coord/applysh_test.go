package coord_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

const applyPassword = "apply-Secret-pw"

// runApply runs the module's apply.sh with the real sh and curl. A curl wrapper
// first on PATH records every command line, to prove the password is not on it.
func runApply(t *testing.T, base string, count int, extraEnv ...string) (out string, code int, curlArgs string) {
	t.Helper()
	realCurl, err := exec.LookPath("curl")
	require.NoError(t, err, "apply.sh needs curl")
	bin := t.TempDir()
	argsLog := filepath.Join(bin, "args.log")
	wrapper := "#!/bin/sh\nprintf '%s\\n' \"$*\" >>'" + argsLog + "'\nexec '" + realCurl + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "curl"), []byte(wrapper), 0o755))

	cmd := exec.Command("sh", filepath.Join("..", "examples", "modules", "stream-group", "apply.sh"))
	cmd.Env = append([]string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"COORDINATOR_BASE_URL=" + base, "COORDINATOR_USERNAME=terraform", "COORDINATOR_PASSWORD=" + applyPassword,
		"STREAM_PREFIX=orders", "CONSUMER_GROUP=billing", "SHARD_COUNT=" + strconv.Itoa(count),
		"REQUESTED_BY=tf:ws", "REASON=apply \"quoted\" reason", "REQUEST_ID_PREFIX=tfrun",
		"TIMEOUT_SECONDS=5", "POLL_INTERVAL_SECONDS=1",
	}, extraEnv...)
	b, err := cmd.CombinedOutput()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	args, _ := os.ReadFile(argsLog)
	return string(b), code, string(args)
}

func TestApplyScript(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, s *coordsim.Sim, c *coord.Client)
		count    int
		env      []string
		wantCode int
		wantOut  []string
		// audit: action -> wanted outcome of the last such event
		audit map[string]string
	}{
		{name: "creates the group", count: 4, wantOut: []string{"created orders/billing with 4 shards"},
			audit: map[string]string{coordsim.ActionCreateGroup: "SUCCESS"}},
		{name: "scales an existing stream", count: 6,
			setup: func(t *testing.T, s *coordsim.Sim, c *coord.Client) {
				_, err := c.CreateGroup(context.Background(), "orders", "billing", coord.CreateRequest{InitialShardCount: 4, RequestedBy: "t"})
				require.NoError(t, err)
			},
			wantOut: []string{"already exists", "scaling stream orders from 4 to 6", "shows 6 shards"},
			audit:   map[string]string{coordsim.ActionCreateGroup: "FAILED", coordsim.ActionScaleStream: "SUCCESS"}},
		{name: "active migration fails clearly", count: 8, wantCode: 1,
			setup: func(t *testing.T, s *coordsim.Sim, c *coord.Client) {
				s.SetDrainingStuck("orders", true) // the real ticker must not finish it first
				_, err := c.CreateGroup(context.Background(), "orders", "audit", coord.CreateRequest{InitialShardCount: 4, RequestedBy: "t"})
				require.NoError(t, err)
				_, err = c.CreateGroup(context.Background(), "orders", "billing", coord.CreateRequest{InitialShardCount: 4, RequestedBy: "t"})
				require.NoError(t, err)
				_, err = c.ScaleStream(context.Background(), "orders", coord.ScaleRequest{TargetShardCount: 6, RequestedBy: "t", Reason: "t"})
				require.NoError(t, err)
			},
			wantOut: []string{"another resharding of stream orders (to 6 shards) is still active"},
			audit:   map[string]string{coordsim.ActionScaleStream: "FAILED"}},
		{name: "429 is retried with the same request id", count: 4,
			setup:   func(t *testing.T, s *coordsim.Sim, c *coord.Client) { s.RateLimitNext(1, time.Second) },
			wantOut: []string{"answered 429 RATE_LIMIT_EXCEEDED; retrying in 1s", "created orders/billing"},
			audit:   map[string]string{coordsim.ActionCreateGroup: "SUCCESS"}},
		{name: "provisioning failure is not retried blindly", count: 8, wantCode: 1,
			setup: func(t *testing.T, s *coordsim.Sim, c *coord.Client) {
				_, err := c.CreateGroup(context.Background(), "orders", "billing", coord.CreateRequest{InitialShardCount: 4, RequestedBy: "t"})
				require.NoError(t, err)
				s.FailNextProvisioning("orders", "billing")
			},
			wantOut: []string{"Redis provisioning failed; the migration stays PREPARING"},
			audit:   map[string]string{coordsim.ActionScaleStream: "FAILED"}}, // a 503 the service answered itself
		{name: "wrong password", count: 4, wantCode: 1, env: []string{"COORDINATOR_PASSWORD=wrong-Secret-pw"},
			wantOut: []string{"401 unauthorized"}, audit: map[string]string{coordsim.ActionCreateGroup: "UNAUTHORIZED"}},
		{name: "bad shard count", count: 0, wantCode: 1, wantOut: []string{"SHARD_COUNT must be a positive integer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := coordsim.New(coordsim.WithUsers(coordsim.User{Name: "terraform", Password: applyPassword, Roles: []coordsim.Role{coordsim.RoleWrite}}))
			ct := &contractTransport{v: loadSpec(t), next: http.DefaultTransport}
			srv := httptest.NewServer(ct.serverSide(sim))
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go sim.Run(ctx, 20*time.Millisecond)
			c, err := coord.New(srv.URL, coord.WithBasicAuth("terraform", applyPassword))
			require.NoError(t, err)
			if tt.setup != nil {
				tt.setup(t, sim, c)
			}
			out, code, curlArgs := runApply(t, srv.URL, tt.count, tt.env...)
			require.Equal(t, tt.wantCode, code, out)
			for _, w := range tt.wantOut {
				require.Contains(t, out, w)
			}
			require.NotContains(t, out, applyPassword)
			require.NotContains(t, out, "wrong-Secret-pw")
			require.NotContains(t, curlArgs, applyPassword, "credentials never on curl's command line")
			require.NotContains(t, curlArgs, "wrong-Secret-pw")

			events := sim.Audit()
			for action, outcome := range tt.audit {
				var last *coordsim.AuditEvent
				ids := map[string]bool{}
				for i := range events {
					if events[i].Action == action && strings.HasPrefix(events[i].RequestID, "tfrun-") {
						last = &events[i]
						ids[events[i].RequestID] = true
					}
				}
				require.NotNil(t, last, "no %s event from apply.sh", action)
				require.Equal(t, outcome, last.Outcome)
				if outcome == "UNAUTHORIZED" {
					// Refused before the body is read: the coordinator logs no requestedBy or reason.
					require.Empty(t, last.RequestedBy)
					require.Empty(t, last.Reason)
				} else {
					require.Equal(t, "tf:ws", last.RequestedBy)
					require.Equal(t, `apply "quoted" reason`, last.Reason, "JSON escaping of the reason")
				}
				require.Len(t, ids, 1, "one request id per step, kept across retries")
				require.True(t, strings.HasPrefix(last.RequestID, "tfrun-"), last.RequestID)
				require.True(t, strings.HasSuffix(last.RequestID, "-orders-billing-"+strconv.Itoa(tt.count)), last.RequestID)
			}
			require.Empty(t, ct.problems)
		})
	}
}

// Terraform applies the groups of one stream in parallel: both read routing
// before either scales, so the second scale meets the first one's migration to
// the same count (409 ACTIVE_MIGRATION_EXISTS). apply.sh waits for it.
func TestApplyScriptParallelGroupsOfOneStream(t *testing.T) {
	sim := coordsim.New(coordsim.WithUsers(coordsim.User{Name: "terraform", Password: applyPassword, Roles: []coordsim.Role{coordsim.RoleWrite}}))
	srv := httptest.NewServer(sim)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sim.Run(ctx, 20*time.Millisecond)
	c, err := coord.New(srv.URL, coord.WithBasicAuth("terraform", applyPassword))
	require.NoError(t, err)
	for _, g := range []string{"audit", "billing"} {
		_, err := c.CreateGroup(context.Background(), "orders", g, coord.CreateRequest{InitialShardCount: 4, RequestedBy: "t"})
		require.NoError(t, err)
	}
	sim.SetDelay(300 * time.Millisecond) // both applies are in flight at once
	sim.SetDrainingStuck("orders", true) // the first scale's migration stays active

	type result struct {
		out  string
		code int
	}
	results := make(chan result, 2)
	for _, g := range []string{"audit", "billing"} {
		go func(g string) {
			out, code, _ := runApply(t, srv.URL, 6, "CONSUMER_GROUP="+g)
			results <- result{out, code}
		}(g)
	}
	var outs []string
	for i := 0; i < 2; i++ {
		r := <-results
		require.Equal(t, 0, r.code, r.out)
		outs = append(outs, r.out)
	}
	joined := strings.Join(outs, "\n")
	require.Contains(t, joined, "scaling stream orders from 4 to 6")
	require.Contains(t, joined, "already being scaled to 6 shards", "the second apply waited for the first one's scale")
	scales := 0
	for _, e := range sim.Audit() {
		if e.Action == coordsim.ActionScaleStream && e.Outcome == "SUCCESS" {
			scales++
		}
	}
	require.Equal(t, 1, scales, "one stream scale, not two")
}
