package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
)

// syncBuffer is written by the command's goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCoordsimUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{name: "help lists every flag", args: []string{"--help"}, wantCode: exitOK, wantErr: "--members-per-group"},
		{name: "unknown flag", args: []string{"--nope"}, wantCode: exitUsage, wantErr: "flag provided but not defined"},
		{name: "listen is required", args: nil, wantCode: exitUsage, wantErr: "--listen is required"},
		{name: "negative members", args: []string{"--listen", "127.0.0.1:0", "--members-per-group", "-1"}, wantCode: exitUsage, wantErr: "0 or more"},
		{name: "bad tick", args: []string{"--listen", "127.0.0.1:0", "--tick", "0s"}, wantCode: exitUsage, wantErr: "--tick must be positive"},
		{name: "bad user value", args: []string{"--listen", "127.0.0.1:0", "--user", "ops:Hidden-pw"}, wantCode: exitUsage, wantErr: "want NAME:PASSWORD:ROLE"},
		{name: "unknown role", args: []string{"--listen", "127.0.0.1:0", "--user", "ops:Hidden-pw:ROOT"}, wantCode: exitUsage, wantErr: "unknown role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runCoordsim(context.Background(), tt.args, &stdout, &stderr)
			require.Equal(t, tt.wantCode, code, stderr.String())
			require.Contains(t, stderr.String(), tt.wantErr)
			require.NotContains(t, stderr.String(), "Hidden-pw")
			if tt.name == "help lists every flag" {
				for _, f := range []string{"--listen", "--audit-log", "--members-per-group", "--tick", "--user"} {
					require.Contains(t, stderr.String(), f)
				}
			} else {
				require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1, "one line: %q", stderr.String())
			}
		})
	}
}

func TestCoordsimServesUntilCancelled(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- runCoordsim(ctx, []string{"--listen", "127.0.0.1:0", "--audit-log", audit, "--tick", "10ms",
			"--members-per-group", "1", "--user", "ops:ops:pw:WRITE", "--user", "viewer:v-pw:READ"}, &stdout, &stderr)
	}()
	addr := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	require.Eventually(t, func() bool { return addr.MatchString(stdout.String()) }, 5*time.Second, 10*time.Millisecond)
	base := addr.FindString(stdout.String())

	ops, err := coord.New(base, coord.WithBasicAuth("ops", "ops:pw"))
	require.NoError(t, err)
	_, err = ops.CreateGroup(ctx, "orders", "billing", coord.CreateRequest{InitialShardCount: 2, RequestedBy: "cmd-test"})
	require.NoError(t, err)
	_, err = ops.ScaleStream(ctx, "orders", coord.ScaleRequest{TargetShardCount: 3, RequestedBy: "cmd-test", Reason: "r"})
	require.NoError(t, err)
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	require.NoError(t, (func() error {
		c, err := coord.New(base, coord.WithBasicAuth("viewer", "v-pw"), coord.WithPollInterval(10*time.Millisecond))
		require.NoError(t, err)
		return c.WaitConverged(wctx, "orders", 3, nil)
	})(), "the real ticker completes the migration")

	admin, err := coord.New(base, coord.WithBasicAuth("admin", "password"))
	require.NoError(t, err)
	_, err = admin.Groups(ctx)
	require.True(t, coord.IsCode(err, coord.CodeUnauthorized), "only the --user users exist: %v", err)

	resp, err := http.Get(base + "/coord/v1/monitoring/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, `Basic realm="redis-stream-coordinator"`, resp.Header.Get("WWW-Authenticate"))

	cancel()
	select {
	case code := <-exited:
		require.Equal(t, exitOK, code, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("coordsim did not stop after cancel")
	}
	b, err := os.ReadFile(audit)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 2)
	require.Contains(t, lines[0], `"action":"CREATE_GROUP"`)
	require.Contains(t, lines[1], `"action":"SCALE_STREAM"`)
	require.NotContains(t, string(b), "ops:pw")
}
