package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// An import block bringing a group the coordinator already has under the
// module (issue 21). The module's terraform_data imports with no input, so the
// plan does not say the count the apply starts from: offline it is
// unknown_value, never a create allowed, and no label waives it.
func TestPlanDeniesImportWithoutStartingCount(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, tf string) {
		dir := copyExamples(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "import.tf"), []byte(`
import {
  to = module.stream_group["create-order/billing"].terraform_data.stream_group
  id = "create-order/billing"
}
`), 0o644))
		for _, labels := range [][]string{nil, {"--label", "policy-exception/unknown_value"}} {
			args := append([]string{"plan", "--terraform", tf, "--dir", dir, "--format", "json"}, labels...)
			code, out, stderr := run(t, args...)
			require.Equal(t, exitDenied, code, out+stderr)
			var got struct {
				Changes []struct {
					Address      string `json:"address"`
					Importing    bool   `json:"importing"`
					ShardsBefore *int   `json:"shards_before"`
				} `json:"changes"`
				Violations []struct {
					Rule    string `json:"rule"`
					Message string `json:"message"`
				} `json:"violations"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			imported := 0
			for _, c := range got.Changes {
				if c.Importing {
					imported++
					require.Equal(t, `module.stream_group["create-order/billing"].terraform_data.stream_group`, c.Address)
					require.Nil(t, c.ShardsBefore)
				}
			}
			require.Equal(t, 1, imported)
			require.Len(t, got.Violations, 1, out)
			require.Equal(t, "unknown_value", got.Violations[0].Rule)
			require.Contains(t, got.Violations[0].Message, "imports an object whose shard count shardgate cannot know")
		}
	})
}
