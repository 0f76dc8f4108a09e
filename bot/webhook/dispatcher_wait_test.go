package webhook

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storeopen"
)

// limitError stands for GitHub's rate limit: a wait until a time.
type limitError struct{ until time.Time }

func (e *limitError) Error() string { return "API rate limit exceeded" }

func waitFor(err error) (time.Time, string, bool) {
	var le *limitError
	if errors.As(err, &le) {
		return le.until, "primary", true
	}
	return time.Time{}, "", false
}

// newWaitingDispatcher is a one-worker dispatcher of h whose limit errors
// are waits and whose flaky errors are transient, bounded at 3 attempts.
func newWaitingDispatcher(t *testing.T, st store.Store, h EventHandler, reported *atomic.Int32) *Dispatcher {
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "test", logctx.Logger(context.Background()))
	require.NoError(t, err)
	d.Attempts, d.RetryBase, d.RetryMax, d.Poll = 3, time.Millisecond, 5*time.Millisecond, 5*time.Millisecond
	d.Transient = func(err error) bool { return errors.Is(err, errFlaky) || waitErr(err) }
	d.Wait = waitFor
	d.Failed = func(context.Context, *store.Job, error) { reported.Add(1) }
	return d
}

func waitErr(err error) bool { _, _, ok := waitFor(err); return ok }

func TestDispatcherPostponesAJobThatMeetsALimitUntilItsReset(t *testing.T) {
	st := storeopen.Bolt(t, "")
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	h := &flakyHandler{errs: []error{&limitError{until: reset}}}
	var reported atomic.Int32
	d := newWaitingDispatcher(t, st, h, &reported)
	ids := enqueue(t, st, "d1")
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	var j *store.Job
	require.Eventually(t, func() bool {
		got, err := st.GetJob(context.Background(), ids[0])
		j = got
		return err == nil && got.State == store.JobQueued && !got.NotBefore.IsZero()
	}, 10*time.Second, 5*time.Millisecond)
	require.True(t, j.NotBefore.Equal(reset), "waits until the reset, not a backoff: %s", j.NotBefore)
	require.Zero(t, j.Attempts, "a wait is not an attempt")
	require.Equal(t, "API rate limit exceeded", j.LastError)
	require.Zero(t, reported.Load(), "nothing is reported as failed")
}

func TestDispatcherNeverFailsAJobForALimit(t *testing.T) {
	// More limit answers than the retry bound, between transient errors: the
	// job still completes, and only the runs that ended otherwise count.
	past := &limitError{until: time.Now().Add(-time.Second)}
	h := &flakyHandler{errs: []error{past, past, errFlaky, past, past, past, errFlaky, past}}
	st := storeopen.Bolt(t, "")
	var reported atomic.Int32
	d := newWaitingDispatcher(t, st, h, &reported)
	ids := enqueue(t, st, "d1")
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	require.Eventually(t, func() bool {
		j, err := st.GetJob(context.Background(), ids[0])
		return err == nil && (j.State == store.JobDone || j.State == store.JobFailed)
	}, 10*time.Second, 5*time.Millisecond)
	j, err := st.GetJob(context.Background(), ids[0])
	require.NoError(t, err)
	require.Equal(t, store.JobDone, j.State, j.LastError)
	require.Equal(t, 3, j.Attempts, "two transient failures and the success")
	require.Zero(t, reported.Load())
}
