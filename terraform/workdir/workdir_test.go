package workdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Sweep removes a dead process's run dir and old checkouts, keeps the run
// dirs whose lock is held, the caller's own and what it does not know.
func TestSweepRemovesOnlyTheDead(t *testing.T) {
	work := t.TempDir()
	dead := filepath.Join(work, RunPrefix+"dead")
	require.NoError(t, os.MkdirAll(filepath.Join(dead, "checkout-1"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dead, LockName), nil, 0o600))
	legacy := filepath.Join(work, legacyCheckoutPrefix+"1")
	require.NoError(t, os.MkdirAll(legacy, 0o700))
	other := filepath.Join(work, "notes")
	require.NoError(t, os.MkdirAll(other, 0o700))
	live, err := Open(work)
	require.NoError(t, err)
	own, err := Open(work)
	require.NoError(t, err)

	removed, err := Sweep(work, own.Path())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{filepath.Base(dead), filepath.Base(legacy)}, removed)
	for _, kept := range []string{live.Path(), own.Path(), other} {
		_, err := os.Stat(kept)
		require.NoError(t, err, kept)
	}

	require.NoError(t, own.Close())
	_, err = os.Stat(own.Path())
	require.ErrorIs(t, err, os.ErrNotExist, "Close removes the run dir")
	require.NoError(t, live.Close())
}
