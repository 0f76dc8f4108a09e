package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/terraform/runner"
)

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// shardgateBinary builds the real binary once: the sandbox is entered by
// re-executing it, so only the binary proves the wiring in main.
func shardgateBinary(t *testing.T) string {
	t.Helper()
	tftest.SkipIfShort(t, "builds the shardgate binary")
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "shardgate-bin-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "shardgate")
		out, err := exec.Command("go", "build", "-o", built, ".").CombinedOutput()
		if err != nil {
			buildErr = &exec.ExitError{Stderr: out}
		}
	})
	require.NoError(t, buildErr)
	return built
}

func TestHelpHidesSandboxExec(t *testing.T) {
	code, _, stderr := run(t, "help")
	require.Equal(t, exitOK, code)
	require.NotContains(t, stderr, "sandbox")
	require.Contains(t, stderr, "plan")
}

func TestSandboxExecSubcommand(t *testing.T) {
	bin := shardgateBinary(t)
	work := t.TempDir()
	secret := filepath.Join(t.TempDir(), "app-key")
	require.NoError(t, os.WriteFile(secret, []byte("app-key-material"), 0o600))
	tests := []struct {
		name    string
		script  string
		wantErr bool
		want    string
	}{
		{name: "own tree", script: "echo ok > f && cat f", want: "ok"},
		{name: "a server file", script: "cat " + secret, wantErr: true, want: "Permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, "__sandbox-exec", "--rw", work, "--", "sh", "-c", tt.script)
			cmd.Dir = work
			out, err := cmd.CombinedOutput()
			if tt.wantErr {
				require.Error(t, err, string(out))
			} else {
				require.NoError(t, err, string(out))
			}
			require.Contains(t, string(out), tt.want)
			require.NotContains(t, string(out), "app-key-material")
		})
	}
	t.Run("usage", func(t *testing.T) {
		out, err := exec.Command(bin, "__sandbox-exec", "--rw", work).CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(out), "-- PROGRAM")
	})
}

// TestLauncherRunsTerraformConfined is the path jobs take: tfexec starts the
// shardgate binary with terraform's arguments and the policy in the
// environment.
func TestLauncherRunsTerraformConfined(t *testing.T) {
	bin := shardgateBinary(t)
	tf := tftest.Binary(t)
	secret := filepath.Join(t.TempDir(), "coordinator-credential")
	require.NoError(t, os.WriteFile(secret, []byte("coord-pa55-d00r"), 0o600))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`resource "terraform_data" "x" {
  input = file("`+secret+`")
}`), 0o644))
	tfAbs, err := filepath.Abs(tf)
	require.NoError(t, err)
	policy, err := json.Marshal(runner.SandboxPolicy{Exec: tfAbs, ReadWrite: append([]string{dir}, runner.SystemReadWrite...),
		ReadOnly: runner.SystemReadOnly})
	require.NoError(t, err)
	launch := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "CHECKPOINT_DISABLE=1",
			"TF_CLI_CONFIG_FILE=/dev/null", runner.SandboxEnv + "=" + string(policy)}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := launch("version")
	require.NoError(t, err, out)
	require.Contains(t, out, "Terraform v1.")
	out, err = launch("init", "-input=false", "-no-color")
	require.NoError(t, err, out)
	out, err = launch("plan", "-input=false", "-no-color")
	require.Error(t, err)
	require.Contains(t, strings.Join(strings.Fields(out), " "), "permission denied")
	require.NotContains(t, out, "coord-pa55-d00r")
}

// TestPlanPassesTheCallersEnvironment: `shardgate plan` runs in a person's
// own shell, unsandboxed, and terraform sees what it would see without
// shardgate: here an http backend configured and authenticated only through
// TF_HTTP_* variables, and a TF_VAR_ value.
func TestPlanPassesTheCallersEnvironment(t *testing.T) {
	tf := tftest.Binary(t)
	var (
		mu   sync.Mutex
		auth []string
	)
	state := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_, pw, _ := r.BasicAuth()
		auth = append(auth, r.Method+" "+pw)
		w.WriteHeader(http.StatusNotFound) // no state yet
	}))
	defer state.Close()
	t.Setenv("TF_HTTP_ADDRESS", state.URL+"/state")
	t.Setenv("TF_HTTP_USERNAME", "operator")
	t.Setenv("TF_HTTP_PASSWORD", "operator-pw-31337")
	t.Setenv("TF_VAR_label", "from-the-shell")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`terraform {
  backend "http" {}
}
variable "label" { type = string }
resource "terraform_data" "x" { input = var.label }
`), 0o644))
	code, out, stderr := run(t, "plan", "--terraform", tf, "--dir", dir, "--format", "json")
	require.NotEqual(t, exitTerraform, code, "terraform failed: %s", stderr)
	require.NotEmpty(t, out)
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, auth, "GET operator-pw-31337", "the backend got the caller's credentials")
}
