package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// A new group whose coordinator URL is known only after apply (issue 21): the
// coordinator is part of the group's identity, so the change is unknown_value,
// and no exception label waives it.
func TestPlanDeniesUnknownCoordinatorURL(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, tf string) {
		dir := copyExamples(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`
resource "terraform_data" "coordinator" {
  input = "http://127.0.0.1:8089"
}

module "stream_group" {
  source               = "../modules/stream-group"
  coordinator_base_url = terraform_data.coordinator.output
  stream_prefix        = "create-order"
  consumer_group       = "billing"
  shard_count          = 4
}
`), 0o644))
		for _, labels := range [][]string{nil, {"--label", "policy-exception/unknown_value"}} {
			args := append([]string{"plan", "--terraform", tf, "--dir", dir, "--format", "text"}, labels...)
			code, out, stderr := run(t, args...)
			require.Equal(t, exitDenied, code, out+stderr)
			require.Contains(t, out, "[unknown_value]")
			require.Contains(t, out, "coordinator_base_url unknown until apply")
		}
	})
}
