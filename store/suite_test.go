package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

// opener returns a new, empty store whose clock is clk, closed when the test
// ends. Each implementation's tests pass one to testStore.
type opener func(t *testing.T, clk *fakeclock.Clock) Store

// fresh opens a store on a clock that follows the real one.
func (o opener) fresh(t *testing.T) Store { return o(t, fakeclock.Following()) }

// freshClock is fresh and its clock, for tests that name times by it.
func (o opener) freshClock(t *testing.T) (Store, *fakeclock.Clock) {
	clk := fakeclock.Following()
	return o(t, clk), clk
}

// testStore is the behaviour every Store implementation must have.
func testStore(t *testing.T, open opener) {
	t.Run("jobs", func(t *testing.T) { testJobs(t, open) })
	t.Run("transitions", func(t *testing.T) { testTransitions(t, open) })
	t.Run("records", func(t *testing.T) { testRecords(t, open) })
	t.Run("concurrency", func(t *testing.T) { testConcurrency(t, open) })
	t.Run("leases", func(t *testing.T) { testLeases(t, open) })
	t.Run("prune", func(t *testing.T) { testPrune(t, open) })
	t.Run("owner checks", func(t *testing.T) { testOwnerChecks(t, open) })
	t.Run("transactions", func(t *testing.T) { testTx(t, open) })
	t.Run("failing jobs", func(t *testing.T) { testFailing(t, open) })
	t.Run("scheduling", func(t *testing.T) { testScheduling(t, open) })
}

// pastAnyLease is further than any store's lease, in tests that need one to
// have expired.
const pastAnyLease = 24 * time.Hour

// enqueue stores a job that the test needs to succeed.
func enqueue(t *testing.T, s Store, delivery, kind string, payload []byte) *Job {
	t.Helper()
	j := &Job{DeliveryID: delivery, Kind: kind, Event: "pull_request", Payload: payload}
	require.NoError(t, s.Enqueue(context.Background(), j, 0))
	return j
}

func claim(t *testing.T, s Store, owner string) *Job {
	t.Helper()
	j, err := s.Claim(context.Background(), owner)
	require.NoError(t, err)
	return j
}

func countQueued(t *testing.T, s Store) int {
	t.Helper()
	n, err := s.CountQueued(context.Background())
	require.NoError(t, err)
	return n
}

func getJob(t *testing.T, s Store, id string) *Job {
	t.Helper()
	j, err := s.GetJob(context.Background(), id)
	require.NoError(t, err)
	return j
}

func testJobs(t *testing.T, open opener) {
	ctx := context.Background()

	t.Run("enqueue fills id, state and times and resets the rest", func(t *testing.T) {
		s := open.fresh(t)
		j := &Job{DeliveryID: "d1", Kind: "event", Event: "push", Payload: []byte(`{"a":1}`),
			State: JobDone, Attempts: 3, Owner: "someone", LastError: "old",
			NotBefore: time.Now().Add(time.Hour), LeaseUntil: time.Now().Add(time.Hour)}
		require.NoError(t, s.Enqueue(ctx, j, 0))
		require.NotEmpty(t, j.ID)
		require.Equal(t, JobQueued, j.State)
		require.Zero(t, j.Attempts)
		require.Empty(t, j.Owner)
		require.Empty(t, j.LastError)
		require.Zero(t, j.NotBefore)
		require.Zero(t, j.LeaseUntil)
		require.False(t, j.CreatedAt.IsZero())
		require.Equal(t, j.CreatedAt, j.UpdatedAt)
		require.Equal(t, j, getJob(t, s, j.ID))
		require.Equal(t, 1, countQueued(t, s))
	})

	t.Run("claims in FIFO order, then nothing", func(t *testing.T) {
		s := open.fresh(t)
		var want []*Job
		for _, kind := range []string{"a", "b", "c", "d", "e"} {
			want = append(want, enqueue(t, s, "", kind, []byte("payload "+kind)))
		}
		prev := ""
		for _, w := range want {
			got := claim(t, s, "worker-1")
			require.NotNil(t, got)
			require.Equal(t, w.ID, got.ID)
			require.Greater(t, got.ID, prev, "ids sort in enqueue order")
			prev = got.ID
			require.Equal(t, w.Kind, got.Kind)
			require.Equal(t, w.Payload, got.Payload)
			require.Equal(t, JobRunning, got.State)
			require.Equal(t, "worker-1", got.Owner)
			require.Equal(t, 1, got.Attempts)
		}
		got, err := s.Claim(ctx, "worker-1")
		require.NoError(t, err)
		require.Nil(t, got)
		require.Zero(t, countQueued(t, s))
	})

	t.Run("duplicate delivery is refused and the original is untouched", func(t *testing.T) {
		s := open.fresh(t)
		orig := enqueue(t, s, "d1", "first", []byte("original"))
		tests := []struct {
			name  string
			setup func(t *testing.T)
		}{
			{name: "while queued", setup: func(t *testing.T) {}},
			{name: "while running", setup: func(t *testing.T) { require.Equal(t, orig.ID, claim(t, s, "w").ID) }},
			{name: "after completion", setup: func(t *testing.T) { require.NoError(t, s.Complete(ctx, orig.ID, "w", nil)) }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.setup(t)
				before := getJob(t, s, orig.ID)
				dup := &Job{DeliveryID: "d1", Kind: "second", Payload: []byte("other")}
				err := s.Enqueue(ctx, dup, 0)
				require.ErrorIs(t, err, ErrDuplicate)
				require.Empty(t, dup.ID, "a refused job is not filled in")
				require.Equal(t, before, getJob(t, s, orig.ID))
				require.Equal(t, []byte("original"), before.Payload)
			})
		}
	})

	t.Run("jobs without delivery id are never duplicates", func(t *testing.T) {
		s := open.fresh(t)
		a, b := enqueue(t, s, "", "x", nil), enqueue(t, s, "", "x", nil)
		require.NotEqual(t, a.ID, b.ID)
		require.Equal(t, 2, countQueued(t, s))
	})

	t.Run("full queue stores nothing and has room after a claim", func(t *testing.T) {
		s := open.fresh(t)
		for _, d := range []string{"d1", "d2"} {
			require.NoError(t, s.Enqueue(ctx, &Job{DeliveryID: d, Kind: "event"}, 2))
		}
		full := &Job{DeliveryID: "d3", Kind: "event"}
		require.ErrorIs(t, s.Enqueue(ctx, full, 2), ErrQueueFull)
		require.Empty(t, full.ID)
		require.Equal(t, 2, countQueued(t, s))
		require.NoError(t, s.Enqueue(ctx, &Job{DeliveryID: "d4"}, 0), "maxQueued 0 is no limit")

		require.NotNil(t, claim(t, s, "w"))
		require.NotNil(t, claim(t, s, "w"))
		// d3 was refused without a trace: the same delivery is accepted now.
		require.NoError(t, s.Enqueue(ctx, full, 2))
		require.NotEmpty(t, full.ID)
		require.Equal(t, 2, countQueued(t, s))
	})

	// RecoverRunning at start takes over what a dead process left running:
	// on a shared store once its lease passed, on a single-process one at once.
	t.Run("recover running after the lease requeues only running jobs in id order", func(t *testing.T) {
		clk := fakeclock.Following()
		s := open(t, clk)
		a, b, c := enqueue(t, s, "a", "a", nil), enqueue(t, s, "b", "b", nil), enqueue(t, s, "c", "c", nil)
		d := enqueue(t, s, "d", "d", nil)
		require.Equal(t, a.ID, claim(t, s, "w").ID)
		require.Equal(t, b.ID, claim(t, s, "w").ID)
		require.Equal(t, c.ID, claim(t, s, "w").ID)
		require.NoError(t, s.Complete(ctx, c.ID, "w", nil))

		clk.Advance(pastAnyLease)
		n, err := s.RecoverRunning(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, 3, countQueued(t, s))
		require.Equal(t, JobDone, getJob(t, s, c.ID).State)
		for _, want := range []struct {
			id       string
			attempts int
		}{{a.ID, 2}, {b.ID, 2}, {d.ID, 1}} {
			got := claim(t, s, "w2")
			require.Equal(t, want.id, got.ID)
			require.Equal(t, want.attempts, got.Attempts)
		}
		clk.Advance(pastAnyLease)
		n, err = s.RecoverRunning(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, n)
	})

	t.Run("returned jobs are copies", func(t *testing.T) {
		s := open.fresh(t)
		payload := []byte("body")
		j := enqueue(t, s, "", "x", payload)
		payload[0] = 'X'
		got := getJob(t, s, j.ID)
		require.Equal(t, []byte("body"), got.Payload)
		got.Payload[0] = 'Y'
		require.Equal(t, []byte("body"), claim(t, s, "w").Payload)
	})

	t.Run("unknown job is not found", func(t *testing.T) {
		s := open.fresh(t)
		for _, id := range []string{"", "00000000000000000042", "nope"} {
			_, err := s.GetJob(ctx, id)
			require.ErrorIs(t, err, ErrNotFound, "id %q", id)
		}
	})

	t.Run("cancelled context stores nothing", func(t *testing.T) {
		s := open.fresh(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := s.Enqueue(cctx, &Job{DeliveryID: "d1", Kind: "x"}, 0)
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, countQueued(t, s))
		require.NoError(t, s.Enqueue(ctx, &Job{DeliveryID: "d1", Kind: "x"}, 0))
	})

	t.Run("ping", func(t *testing.T) {
		require.NoError(t, open.fresh(t).Ping(ctx))
	})
}
