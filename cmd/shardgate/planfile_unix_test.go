//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A plan file cut short while it is mapped faults where the parse reads past its
// new end: a bad-input error, not a crash.
func TestReadPlanMappedFileTruncated(t *testing.T) {
	raw := taintedReplacePlan(2 * dropChunk)
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, passed, unmap, err := mapFile(f)
	require.NoError(t, err)
	require.Len(t, b, len(raw))
	defer unmap()
	require.NoError(t, os.Truncate(path, 0))

	cs, err := parseMapped(path, b, passed)
	require.ErrorIs(t, err, errPlanChanged)
	require.Nil(t, cs)
}

// What is not a regular file is not mapped.
func TestMapFileSkipsNonRegularFiles(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	b, _, _, err := mapFile(r)
	require.NoError(t, err)
	require.Nil(t, b)
}
