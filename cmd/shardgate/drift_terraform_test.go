package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/internal/testing/tftest"
)

const simPassword = "sim-password-5309"

// appliedExample applies the example root against a fresh simulator with the
// real terraform and returns its dir and the simulator's URL.
func appliedExample(t *testing.T, tf string) (string, string) {
	t.Helper()
	sim := coordsim.New(coordsim.WithUsers(coordsim.User{Name: "admin", Password: simPassword, Roles: []coordsim.Role{coordsim.RoleRead, coordsim.RoleWrite, coordsim.RoleAdmin, coordsim.RoleMonitor}}))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go sim.Run(ctx, 20*time.Millisecond)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	dir := copyExamples(t)
	t.Setenv("TF_VAR_coordinator_base_url", srv.URL)
	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_VAR_coordinator_username=admin", "TF_VAR_coordinator_password="+simPassword)
	for _, args := range [][]string{{"init", "-input=false"}, {"apply", "-input=false", "-auto-approve"}} {
		cmd := exec.Command(tf, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	return dir, srv.URL
}

func scaleSim(t *testing.T, url, stream string, shards int) {
	t.Helper()
	c, err := coord.New(url, coord.WithBasicAuth("admin", simPassword))
	require.NoError(t, err)
	_, err = c.ScaleStream(context.Background(), stream, coord.ScaleRequest{TargetShardCount: shards, RequestedBy: "operator", Reason: "by hand"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		gs, err := c.Groups(context.Background())
		require.NoError(t, err)
		for _, g := range gs {
			if g.StreamPrefix == stream && g.ShardCount != shards {
				return false
			}
		}
		return true
	}, time.Minute, 20*time.Millisecond)
}

func TestDriftCLIAgainstTheSimulator(t *testing.T) {
	tf := tftest.Binary(t)
	dir, url := appliedExample(t, tf)
	t.Setenv(EnvCoordinatorPassword, simPassword)
	args := []string{"drift", "--terraform", tf, "--dir", dir, "--coordinator-url-prefix", url, "--coordinator-user", "admin"}

	code, out, stderr := run(t, args...)
	require.Equal(t, exitNoDrift, code, stderr)
	require.Contains(t, out, ": no drift")

	scaleSim(t, url, "create-order", 6)
	code, out, stderr = run(t, append(args, "--format", "json")...)
	require.Equal(t, exitDrift, code, stderr)
	var res struct {
		Status string `json:"status"`
		Groups []struct {
			StreamPrefix  string `json:"stream_prefix"`
			ConsumerGroup string `json:"consumer_group"`
			Desired       int    `json:"desired"`
			Live          int    `json:"live"`
			Delta         int    `json:"delta"`
		} `json:"groups"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, "drifted", res.Status)
	require.Len(t, res.Groups, 2)
	for _, g := range res.Groups {
		require.Equal(t, "create-order", g.StreamPrefix)
		require.Equal(t, [3]int{4, 6, 2}, [3]int{g.Desired, g.Live, g.Delta}, g.ConsumerGroup)
	}
	code, out, _ = run(t, append(args, "--format", "markdown")...)
	require.Equal(t, exitDrift, code)
	require.Contains(t, out, "| `create-order` | `billing` |")

	// A coordinator no prefix covers is not called: the check cannot tell.
	code, _, stderr = run(t, "drift", "--terraform", tf, "--dir", dir, "--coordinator-url-prefix", "http://elsewhere.example", "--coordinator-user", "admin")
	require.Equal(t, exitTerraform, code)
	require.Contains(t, stderr, "not covered by a --coordinator-url-prefix")

	// Terraform fails: exit 3, never drift.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.tf"), []byte("resource \"terraform_data\" \"x\" {\n  input = undeclared.y.z\n}\n"), 0o644))
	code, out, stderr = run(t, args...)
	require.Equal(t, exitTerraform, code, out)
	require.Contains(t, stderr, "undeclared")
	require.NoError(t, os.Remove(filepath.Join(dir, "broken.tf")))

	scaleSim(t, url, "create-order", 4)
	code, _, stderr = run(t, args...)
	require.Equal(t, exitNoDrift, code, stderr)
	for _, s := range []string{out, stderr} {
		require.NotContains(t, s, simPassword)
	}
}

func TestDriftBadUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		env  string
		want string
	}{
		{args: []string{"drift"}, want: "--dir is required"},
		{args: []string{"drift", "--dir", filepath.Join(dir, "nope")}, want: "is not a directory"},
		{args: []string{"drift", "--dir", dir, "--format", "yaml"}, want: "--format \"yaml\""},
		{args: []string{"drift", "--dir", dir, "--coordinator-url-prefix", "http://u:p@coord"}, want: "is not a URL"},
		{args: []string{"drift", "--dir", dir}, env: "secret-xyz", want: "--coordinator-user is not"},
		{args: []string{"drift", "--dir", dir, "--var-file", "missing.tfvars"}, want: "does not exist"},
	} {
		t.Setenv(EnvCoordinatorPassword, tt.env)
		code, out, stderr := run(t, tt.args...)
		require.Equal(t, exitUsage, code, "%v", tt.args)
		require.Empty(t, out)
		require.Contains(t, stderr, tt.want)
		require.Equal(t, 1, len(splitLines(stderr)), "one line: %q", stderr)
		require.NotContains(t, stderr, "secret-xyz")
	}
}

func splitLines(s string) []string {
	var out []string
	for _, l := range []byte(s) {
		if l == '\n' {
			out = append(out, "")
		}
	}
	return out
}
