package fakeclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStandingStill(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	c := New(t0)
	require.Equal(t, t0, c.Now())
	require.Equal(t, t0, c.Now(), "it moves only when advanced")
	c.Advance(time.Minute)
	require.Equal(t, t0.Add(time.Minute), c.Now())
	c.Set(t0)
	require.Equal(t, t0, c.Now())
}

func TestFollowing(t *testing.T) {
	c := Following()
	before := time.Now()
	require.False(t, c.Now().Before(before))
	c.Advance(time.Hour)
	require.True(t, c.Now().After(before.Add(59*time.Minute)), "shifted by what was advanced")
	require.True(t, c.Now().Before(time.Now().Add(61*time.Minute)))
}
