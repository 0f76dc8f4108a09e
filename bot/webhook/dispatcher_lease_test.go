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
	"github.com/shardgate/shardgate/store/storetest"
)

// openPostgresStore opens a PostgreSQL store in a schema of the test's own,
// with the given job lease; skipped only without SHARDGATE_TEST_POSTGRES_URL.
func openPostgresStore(t testing.TB, lease time.Duration) (*store.Postgres, string) {
	t.Helper()
	url := storetest.PostgresURL(t)
	return storeopen.PostgresAt(t, url, lease), url
}

// A replica that stops renewing (paused, partitioned) loses its job to
// another once the lease expires: its run is cancelled and it records and
// reports nothing, while the new owner's outcome stands.
func TestDispatcherLostLeaseStopsTheJobAndRecordsNothing(t *testing.T) {
	const lease = 300 * time.Millisecond
	st, url := openPostgresStore(t, lease)
	stB := storeopen.PostgresAt(t, url, lease)
	ids := enqueue(t, st, "d1")

	stalled := &fakeHandler{block: make(chan struct{}), started: make(chan string, 1), err: errors.New("A's outcome")}
	a, err := NewDispatcher(st, []EventHandler{stalled}, 1, "replica-a", logctx.Logger(context.Background()))
	require.NoError(t, err)
	a.Lease = 20 * lease // A renews far too late: its claim expires meanwhile
	var reportedA atomic.Int32
	a.Failed = func(context.Context, *store.Job, error) { reportedA.Add(1) }
	require.NoError(t, a.Start(context.Background()))
	defer a.Close(context.Background())
	<-stalled.started

	other := &fakeHandler{}
	b, err := NewDispatcher(stB, []EventHandler{other}, 1, "replica-b", logctx.Logger(context.Background()))
	require.NoError(t, err)
	b.Lease, b.Poll = lease, 20*time.Millisecond
	require.NoError(t, b.Start(context.Background()))
	defer b.Close(context.Background())
	require.Eventually(t, func() bool {
		j, err := st.GetJob(context.Background(), ids[0])
		return err == nil && j.State == store.JobDone
	}, 10*time.Second, 10*time.Millisecond, "B takes the expired job over and finishes it")

	// A's heartbeat finds the job gone: its handler's context ends.
	require.Eventually(t, func() bool { return stalled.cancelled.Load() == 1 }, 20*lease+5*time.Second, 10*time.Millisecond,
		"A's run is cancelled once its heartbeat says the lease is lost")
	j, err := st.GetJob(context.Background(), ids[0])
	require.NoError(t, err)
	require.Equal(t, store.JobDone, j.State, "A's failure is not recorded over B's outcome")
	require.Empty(t, j.LastError)
	require.Zero(t, reportedA.Load(), "A reports nothing on the PR")
	require.Equal(t, []string{"d1"}, other.seen())
}

// Heartbeats keep a long job: for many leases no other replica takes it.
func TestDispatcherHeartbeatsKeepALongJob(t *testing.T) {
	const lease = 200 * time.Millisecond
	st, url := openPostgresStore(t, lease)
	stB := storeopen.PostgresAt(t, url, lease)
	ids := enqueue(t, st, "long")
	long := &fakeHandler{block: make(chan struct{}), started: make(chan string, 1)}
	a, err := NewDispatcher(st, []EventHandler{long}, 1, "replica-a", logctx.Logger(context.Background()))
	require.NoError(t, err)
	a.Lease = lease
	require.NoError(t, a.Start(context.Background()))
	defer a.Close(context.Background())
	<-long.started

	other := &fakeHandler{started: make(chan string, 1)}
	b, err := NewDispatcher(stB, []EventHandler{other}, 1, "replica-b", logctx.Logger(context.Background()))
	require.NoError(t, err)
	b.Lease, b.Poll = lease, 10*time.Millisecond
	require.NoError(t, b.Start(context.Background()))
	defer b.Close(context.Background())
	started := time.Now()
	require.Never(t, func() bool { return len(other.started) > 0 }, 10*lease, 20*time.Millisecond,
		"B never runs a job whose owner renews it")
	close(long.block)
	require.Eventually(t, func() bool {
		j, err := st.GetJob(context.Background(), ids[0])
		return err == nil && j.State == store.JobDone
	}, 5*time.Second, 10*time.Millisecond)
	require.Greater(t, time.Since(started), 5*lease)
	require.Equal(t, []string{"long"}, long.seen())
	require.Empty(t, other.seen())
}

// failingHeartbeats is a store whose heartbeats fail as if the database
// could not be reached.
type failingHeartbeats struct {
	store.Store
	calls atomic.Int32
}

func (f *failingHeartbeats) Heartbeat(context.Context, string, string) error {
	f.calls.Add(1)
	return errors.New("dial tcp 127.0.0.1:5432: connection refused")
}

// With no renewal for a whole lease, another replica may have the job: the
// worker stops it rather than finish it unseen.
func TestDispatcherStopsAJobItCouldNotRenewForALease(t *testing.T) {
	st := &failingHeartbeats{Store: storeopen.Bolt(t, "")}
	ids := enqueue(t, st, "d1")
	h := &fakeHandler{block: make(chan struct{}), started: make(chan string, 1)}
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "replica-a", logctx.Logger(context.Background()))
	require.NoError(t, err)
	d.Lease = 90 * time.Millisecond
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	<-h.started
	require.Eventually(t, func() bool { return h.cancelled.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
	require.GreaterOrEqual(t, st.calls.Load(), int32(3), "it kept trying within the lease")
	j, err := st.GetJob(context.Background(), ids[0])
	require.NoError(t, err)
	require.Equal(t, store.JobRunning, j.State, "not completed: it stays for a takeover")
}
