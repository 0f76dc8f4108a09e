package webhook

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storeopen"
)

// A running job cancelled by id stops on its context, with the cause naming
// who cancelled; it is recorded done, neither retried nor reported failed.
// An id no worker runs is not cancelled.
func TestDispatcherCancelsARunningJobByID(t *testing.T) {
	st := storeopen.Bolt(t, "")
	h := &fakeHandler{block: make(chan struct{}), started: make(chan string, 1)}
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "test", logctx.Logger(context.Background()))
	require.NoError(t, err)
	d.Transient = func(error) bool { return true } // a cancel is still not retried
	var failed atomic.Int32
	d.Failed = func(context.Context, *store.Job, error) { failed.Add(1) }
	ids := enqueue(t, st, "slow", "next")
	require.False(t, d.CancelRunning(ids[0], "@alice"), "nothing runs yet")
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	<-h.started
	require.False(t, d.CancelRunning(ids[1], "@alice"), "queued, not running")
	require.True(t, d.CancelRunning(ids[0], "@alice"))
	require.Eventually(t, func() bool {
		j, err := st.GetJob(context.Background(), ids[0])
		return err == nil && j.State == store.JobDone
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, int32(1), h.cancelled.Load(), "the handler saw its context end")
	j, err := st.GetJob(context.Background(), ids[0])
	require.NoError(t, err)
	require.Equal(t, 1, j.Attempts, "not retried")
	require.Empty(t, j.LastError)
	require.Zero(t, failed.Load(), "not reported as a failure")
	<-h.started // the next job runs
	close(h.block)
	require.False(t, d.CancelRunning(ids[0], "@alice"), "finished")
}

func TestCancelledReadsTheCause(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	require.Nil(t, Cancelled(ctx))
	cancel(&CancelledError{By: "@alice"})
	require.Equal(t, &CancelledError{By: "@alice"}, Cancelled(ctx))
	require.EqualError(t, Cancelled(ctx), "cancelled by @alice")
	shut, stop := context.WithCancel(context.Background())
	stop()
	require.Nil(t, Cancelled(shut), "a shutdown is no cancel")
}
