package planparse_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// The shared fixtures are real plans of other providers: none is a coordinator change.
func TestParseForeignPlans(t *testing.T) {
	files, err := filepath.Glob("../testdata/terraform/plans/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			cs, err := planparse.ParseBytes(raw)
			require.NoError(t, err)
			require.NotEmpty(t, cs.FormatVersion)
			require.Empty(t, cs.Changes)
			require.Empty(t, cs.Desired)
			require.Empty(t, cs.Resources)
		})
	}
}
