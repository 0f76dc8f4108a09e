package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// The second step of moving a group between modules (issue 21): both
// declarations were applied, now the old one is removed. The new one still
// manages the group, so nothing is unmanaged: the removal is a move of
// ownership, allowed without a label. The module here has the stream group's
// shape without the provisioner, so that applying needs no coordinator.
func TestPlanRemovingADuplicateDeclarationMovesOwnership(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, tf string) {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "group"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "group", "main.tf"), []byte(`
variable "consumer_group" { type = string }
resource "terraform_data" "stream_group" {
  input = {
    coordinator_base_url = "http://coord:8089"
    stream_prefix        = "create-order"
    consumer_group       = var.consumer_group
    shard_count          = 4
  }
}
`), 0o644))
		both := `
module "old" {
  source         = "./group"
  consumer_group = "billing"
}
module "new" {
  source         = "./group"
  consumer_group = "billing"
}
`
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(both), 0o644))
		for _, args := range [][]string{{"init", "-input=false"}, {"apply", "-input=false", "-auto-approve"}} {
			cmd := exec.Command(tf, args...)
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "TF_IN_AUTOMATION=1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`
module "new" {
  source         = "./group"
  consumer_group = "billing"
}
`), 0o644))
		code, out, stderr := run(t, "plan", "--terraform", tf, "--dir", dir, "--format", "json")
		require.Equal(t, exitOK, code, out+stderr)
		var got struct {
			Changes []struct {
				Address   string `json:"address"`
				Action    string `json:"action"`
				ManagedBy string `json:"managed_by"`
			} `json:"changes"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.Len(t, got.Changes, 1, out)
		require.Equal(t, "module.old.terraform_data.stream_group", got.Changes[0].Address)
		require.Equal(t, "unmanage", got.Changes[0].Action)
		require.Equal(t, "module.new.terraform_data.stream_group", got.Changes[0].ManagedBy)

		_, md, _ := run(t, "plan", "--terraform", tf, "--dir", dir, "--format", "markdown")
		require.Contains(t, md, "ownership moves to")
	})
}
