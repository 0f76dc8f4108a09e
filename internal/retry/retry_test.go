package retry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackoffDoublesUpToMax(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 5 * time.Second}
	var got []time.Duration
	for a := 1; a <= 5; a++ {
		got = append(got, b.Delay(a))
	}
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, got)
	require.Equal(t, 8*time.Second, Backoff{Initial: time.Second}.Delay(4), "no Max: no bound")
	require.Equal(t, time.Hour, Backoff{Initial: time.Second, Max: time.Hour}.Delay(1000), "no overflow")
}

func TestBackoffJitterSpreadsAroundThePause(t *testing.T) {
	at := func(r float64) time.Duration {
		return Backoff{Initial: 10 * time.Second, Jitter: 0.2, Rand: func() float64 { return r }}.Delay(1)
	}
	require.Equal(t, 9*time.Second, at(0))
	require.Equal(t, 10*time.Second, at(0.5))
	require.Equal(t, 11*time.Second, at(1))
}

func TestRepeatable(t *testing.T) {
	require.True(t, Repeatable(true, false), "an idempotent request")
	require.True(t, Repeatable(false, true), "a creation the server refused before acting")
	require.False(t, Repeatable(false, false), "a creation that may have been done is looked up, not repeated")
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"3": 3 * time.Second, " 0 ": 0,
		"Sun, 01 Mar 2026 12:00:30 GMT": 30 * time.Second,
		"Sun, 01 Mar 2026 11:00:00 GMT": 0,
	} {
		d, ok := ParseRetryAfter(v, now)
		require.True(t, ok, v)
		require.Equal(t, want, d, v)
	}
	for _, v := range []string{"", "-1", "soon"} {
		_, ok := ParseRetryAfter(v, now)
		require.False(t, ok, v)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled)
	require.NoError(t, Sleep(context.Background(), 0))
}
