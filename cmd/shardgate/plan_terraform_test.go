package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// copyExamples copies examples/modules and examples/streams into a fresh dir and
// returns the root configuration's directory there.
func copyExamples(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for _, d := range []string{"modules", "streams"} {
		out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "examples", d), dst).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	return filepath.Join(dst, "streams")
}

func TestPlanExampleFromScratch(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, tf string) {
		dir := copyExamples(t)
		code, out, stderr := run(t, "plan", "--terraform", tf, "--dir", dir, "--format", "json")
		require.Equal(t, exitOK, code, stderr)
		var got struct {
			Allowed bool `json:"allowed"`
			Changes []struct {
				Action       string `json:"action"`
				StreamPrefix string `json:"stream_prefix"`
				ShardsAfter  *int   `json:"shards_after"`
			} `json:"changes"`
			StateLockWaits []any `json:"state_lock_waits"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.True(t, got.Allowed)
		require.Len(t, got.Changes, 3)
		for _, c := range got.Changes {
			require.Equal(t, "create", c.Action)
		}
		require.NotNil(t, got.StateLockWaits, "state_lock_waits is present, empty when none")
		require.Empty(t, got.StateLockWaits)
	})
}

func TestPlanVarFileAndWorkspace(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, tf string) {
		dir := copyExamples(t)
		vars := filepath.Join(t.TempDir(), "big.tfvars")
		require.NoError(t, os.WriteFile(vars, []byte(`groups = {
  "create-order/billing" = { stream_prefix = "create-order", consumer_group = "billing", shard_count = 4 }
  "create-order/audit"   = { stream_prefix = "create-order", consumer_group = "audit", shard_count = 8 }
}
`), 0o644))
		code, out, stderr := run(t, "plan", "--terraform", tf, "--dir", dir, "--workspace", "staging", "--var-file", vars, "--format", "text")
		require.Equal(t, exitDenied, code, stderr)
		require.Contains(t, out, "[conflicting_shard_count]")
		require.DirExists(t, filepath.Join(dir, "terraform.tfstate.d", "staging"), "the workspace was created")
	})
}

func TestPlanBadUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no dir", []string{"plan"}, exitUsage, "--dir is required"},
		{"dir missing", []string{"plan", "--dir", "/nonexistent/dir"}, exitUsage, "is not a directory"},
		{"var file missing", []string{"plan", "--dir", ".", "--var-file", "/nonexistent.tfvars"}, exitUsage, "does not exist"},
		{"bad lock timeout", []string{"plan", "--dir", ".", "--lock-timeout", "soon"}, exitUsage, "invalid value"},
		{"no terraform", []string{"plan", "--dir", ".", "--terraform", "/nonexistent/terraform"}, exitTerraform, "terraform"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(t, tt.args...)
			require.Equal(t, tt.code, code, stderr)
			require.Contains(t, stderr, tt.want)
		})
	}
}

func TestPlanHelpListsTheContractFlags(t *testing.T) {
	code, _, stderr := run(t, "plan", "--help")
	require.Equal(t, exitOK, code)
	for _, f := range []string{"--dir", "--workspace", "--var-file", "--lock-timeout", "--config", "--label", "--attest", "--format"} {
		require.Contains(t, stderr, f)
	}
}

// A second operator's `terraform apply` holds the local state lock while shardgate
// plans: with a short --lock-timeout shardgate exits 3 naming the holder, and the
// holder finishes normally, releasing its own lock.
func TestPlanStateLockHeldExits3(t *testing.T) {
	tf := tftest.Binary(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`
variable "run" {
  type    = string
  default = "1"
}
resource "terraform_data" "slow" {
  triggers_replace = [var.run]
  provisioner "local-exec" {
    command = "sleep 6"
  }
}
`), 0o644))
	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=")
	initCmd := exec.Command(tf, "init", "-input=false")
	initCmd.Dir, initCmd.Env = dir, env
	out, err := initCmd.CombinedOutput()
	require.NoError(t, err, string(out))

	writer := exec.Command(tf, "apply", "-input=false", "-auto-approve", "-var", "run=2")
	writer.Dir, writer.Env = dir, env
	var writerOut strings.Builder
	writer.Stdout, writer.Stderr = &writerOut, &writerOut
	require.NoError(t, writer.Start())
	lockFile := filepath.Join(dir, ".terraform.tfstate.lock.info")
	require.Eventually(t, func() bool { _, err := os.Stat(lockFile); return err == nil }, 20*time.Second, 50*time.Millisecond)

	code, _, stderr := run(t, "plan", "--terraform", tf, "--dir", dir, "--lock-timeout", "1s", "--format", "json")
	require.Equal(t, exitTerraform, code, stderr)
	info, err := os.ReadFile(lockFile)
	require.NoError(t, err, "the writer still holds its lock")
	var lock struct{ ID, Who, Operation string }
	require.NoError(t, json.Unmarshal(info, &lock))
	last := strings.TrimSpace(stderr[strings.LastIndex(strings.TrimSpace(stderr), "\n")+1:])
	require.Contains(t, last, "state lock still held")
	require.Contains(t, last, lock.ID)
	require.Contains(t, last, lock.Who)
	require.Contains(t, last, "(apply, lock id "+lock.ID+")")
	require.Contains(t, stderr, "waiting", "the wait was reported while it happened")

	require.NoError(t, writer.Wait(), writerOut.String())
	require.NoFileExists(t, lockFile, "the writer released its own lock; shardgate never breaks it")
}

// terraform's diagnostics reach the caller's terminal whole: the one-line
// reason names the file, line and variable, the lines after it the rest.
func TestPlanPrintsTerraformsDiagnostics(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, tf string) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte("variable \"region_name\" {\n  type = string\n}\n"), 0o644))
		code, _, stderr := run(t, "plan", "--terraform", tf, "--dir", dir)
		require.Equal(t, exitTerraform, code, stderr)
		first, rest, _ := strings.Cut(stderr, "\n")
		require.Equal(t, `shardgate plan: terraform plan failed (exit 1): main.tf:1: No value for required variable: The root module input variable "region_name" is not set, and has no default value.`, first)
		require.Contains(t, rest, "  Error: No value for required variable\n")
		require.Contains(t, rest, "  on main.tf:1\n")
		require.Contains(t, rest, `1: variable "region_name" {`)
		require.Contains(t, rest, "Use a -var or -var-file command line argument")

		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte("resource \"terraform_data\" \"x\" {\n\nresource {\n"), 0o644))
		code, _, stderr = run(t, "plan", "--terraform", tf, "--dir", dir)
		require.Equal(t, exitTerraform, code, stderr)
		require.Contains(t, stderr, "shardgate plan: terraform init failed (exit 1): main.tf:3: Unclosed configuration block")
	})
}

// A `shardgate plan` killed with -9 leaves its scratch dir (saved plan,
// variable files); the next run removes it, and keeps what is not its own.
func TestPlanSweepsScratchLeftByKilledRuns(t *testing.T) {
	tf := tftest.Binary(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	left := filepath.Join(tmp, "shardgate-job-123")
	require.NoError(t, os.MkdirAll(left, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(left, ".lock"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(left, "sensitive.tfvars.json"), []byte(`{"coordinator_password":"hunter2hunter2"}`), 0o600))
	other := filepath.Join(tmp, "someone-elses")
	require.NoError(t, os.MkdirAll(other, 0o700))

	dir := copyExamples(t)
	code, _, stderr := run(t, "plan", "--terraform", tf, "--dir", dir, "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	require.NoDirExists(t, left)
	require.DirExists(t, other)
	require.Contains(t, stderr, "removed 1 scratch dir(s) left by killed runs")
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasPrefix(e.Name(), "shardgate-job-"), "the run's own scratch is removed too: %s", e.Name())
	}
}

// A stream prefix and a consumer group from sensitive variables are judged
// like any other and never printed: the JSON and the text say "(sensitive)".
func TestPlanNeverPrintsSensitiveNames(t *testing.T) {
	tf := tftest.Binary(t)
	dir := copyExamples(t)
	const prefix, group = "ledger-7f3a9c", "payout-b41e"
	root := `variable "secret_prefix" {
  type      = string
  default   = "` + prefix + `"
  sensitive = true
}
variable "secret_group" {
  type      = string
  default   = "` + group + `"
  sensitive = true
}
module "hidden" {
  source               = "../modules/stream-group"
  coordinator_base_url = "http://127.0.0.1:1"
  stream_prefix        = var.secret_prefix
  consumer_group       = var.secret_group
  shard_count          = 4
}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hidden.tf"), []byte(root), 0o644))
	for _, format := range []string{"json", "text"} {
		code, out, stderr := run(t, "plan", "--terraform", tf, "--dir", dir, "--format", format)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, out, "(sensitive)", format)
		for _, secret := range []string{prefix, group} {
			require.NotContains(t, out, secret, format)
			require.NotContains(t, stderr, secret, format)
		}
	}
}
