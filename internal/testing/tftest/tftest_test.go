package tftest

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
)

// setShort runs the rest of the test as under -short (or not).
func setShort(t *testing.T, on bool) {
	t.Helper()
	old := flag.Lookup("test.short").Value.String()
	v := "false"
	if on {
		v = "true"
	}
	require.NoError(t, flag.Set("test.short", v))
	t.Cleanup(func() { _ = flag.Set("test.short", old) })
}

// make test-short is the fast subset: a test that runs terraform skips there.
func TestBinarySkipsUnderShort(t *testing.T) {
	setShort(t, true)
	var sub *testing.T
	reached := false
	t.Run("real terraform", func(t *testing.T) {
		sub = t
		Binary(t)
		reached = true
	})
	require.True(t, sub.Skipped())
	require.False(t, reached, "the test went on after Binary")
}

// make test runs everything: without -short Binary finds terraform.
func TestBinaryRunsWithoutShort(t *testing.T) {
	SkipIfShort(t, "needs the real terraform")
	setShort(t, false)
	var sub *testing.T
	path := ""
	t.Run("real terraform", func(t *testing.T) {
		sub = t
		path = Binary(t)
	})
	require.False(t, sub.Skipped())
	require.NotEmpty(t, path)
}
