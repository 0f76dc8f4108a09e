package webhook

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
)

// A transient failure's retry is due on the clock the store claims on: with
// that clock decades behind the real time, a retry set on the wall clock
// would never come due.
func TestDispatcherSetsARetryOnTheStoresClock(t *testing.T) {
	clock := fakeclock.Following()
	clock.Advance(-25 * 365 * 24 * time.Hour)
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"), store.WithClock(clock.Now))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	h := &flakyHandler{errs: []error{fmt.Errorf("502 Bad Gateway: %w", errFlaky)}}
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "test", logctx.Logger(context.Background()))
	require.NoError(t, err)
	d.Attempts, d.RetryBase, d.RetryMax, d.Poll = 3, time.Millisecond, 5*time.Millisecond, 5*time.Millisecond
	d.Transient = func(err error) bool { return true }
	d.Now = clock.Now
	ids := enqueue(t, st, "d1")
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	require.Eventually(t, func() bool {
		j, err := st.GetJob(context.Background(), ids[0])
		return err == nil && j.State == store.JobDone
	}, 10*time.Second, 5*time.Millisecond, "the retry came due on the store's clock")
}
