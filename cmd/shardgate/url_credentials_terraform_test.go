package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// A coordinator URL carrying a password and a token in its query (issue 21):
// every output format shows the plan's changes and none shows a credential.
func TestPlanHidesURLCredentials(t *testing.T) {
	const password, token = "hunter2-Zq9xW", "tok-Zq9xW-77"
	tftest.EachBinary(t, func(t *testing.T, tf string) {
		dir := copyExamples(t)
		vars := filepath.Join(t.TempDir(), "url.tfvars")
		require.NoError(t, os.WriteFile(vars, []byte(`coordinator_base_url = "http://ops:`+password+`@coord.internal:8089/?region=eu&token=`+token+`"
`), 0o644))
		for _, format := range []string{"text", "json", "markdown"} {
			code, out, stderr := run(t, "plan", "--terraform", tf, "--dir", dir, "--var-file", vars, "--format", format)
			require.Equal(t, exitOK, code, stderr)
			for _, secret := range []string{password, token} {
				require.NotContains(t, out, secret, format)
				require.NotContains(t, stderr, secret, format)
			}
			if format == "json" {
				var got struct {
					Changes []struct {
						CoordinatorURL string `json:"coordinator_url"`
						Coordinator    string `json:"coordinator"`
					} `json:"changes"`
				}
				require.NoError(t, json.Unmarshal([]byte(out), &got))
				require.Len(t, got.Changes, 3)
				for _, c := range got.Changes {
					require.Equal(t, "http://ops:xxxxx@coord.internal:8089/?region=eu&token=xxxxx", c.CoordinatorURL)
					require.Equal(t, "http://coord.internal:8089", c.Coordinator)
				}
			}
			if format == "markdown" {
				require.Contains(t, out, "Raw resource changes", "the raw block is rendered, and hides them too")
				require.Contains(t, out, "ops:xxxxx@coord.internal:8089", "the raw block shows the URL redacted")
			}
		}
	})
}
