package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store/storeopen"
)

// A job's pauses double from RetryBase up to RetryMax, each spread over half
// to one and a half of its length.
func TestJobBackoffDoublesToTheMaxWithJitter(t *testing.T) {
	d, err := NewDispatcher(storeopen.Bolt(t, ""), nil, 1, "test", logctx.Logger(context.Background()))
	require.NoError(t, err)
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second,
		64 * time.Second, 128 * time.Second, 3 * time.Minute, 3 * time.Minute}
	for i, w := range want {
		for range 20 {
			got := d.jobBackoff(i + 1)
			require.GreaterOrEqual(t, got, w/2, "attempt %d", i+1)
			require.LessOrEqual(t, got, w*3/2, "attempt %d", i+1)
		}
	}
	first := d.jobBackoff(0)
	require.True(t, first >= time.Second && first <= 3*time.Second, "attempt 0 counts as the first: %s", first)
}
