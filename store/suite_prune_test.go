package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

func testPrune(t *testing.T, open opener) {
	ctx := context.Background()
	newClock := func() *fakeclock.Clock { return fakeclock.New(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)) }
	t0 := newClock().Now() // where each starts

	t.Run("prunes finished jobs by their finish time, never live ones", func(t *testing.T) {
		clk := newClock()
		s := open(t, clk)
		done := enqueue(t, s, "d-done", "event", []byte("p1"))
		failed := enqueue(t, s, "d-failed", "event", []byte("p2"))
		running := enqueue(t, s, "d-running", "event", nil)
		queued := enqueue(t, s, "d-queued", "event", nil)
		require.Equal(t, done.ID, claim(t, s, "w").ID)
		require.NoError(t, s.Complete(ctx, done.ID, "w", nil)) // finished at t0
		clk.Set(t0.Add(time.Hour))
		require.Equal(t, failed.ID, claim(t, s, "w").ID)
		require.NoError(t, s.Complete(ctx, failed.ID, "w", errors.New("boom"))) // finished at t0+1h
		require.Equal(t, running.ID, claim(t, s, "w").ID)

		steps := []struct {
			name      string
			olderThan time.Time
			want      int
			gone      []*Job
			kept      []*Job
		}{
			{name: "nothing finished before t0", olderThan: t0, kept: []*Job{done, failed, running, queued}},
			{name: "the job done at t0", olderThan: t0.Add(30 * time.Minute), want: 1,
				gone: []*Job{done}, kept: []*Job{failed, running, queued}},
			{name: "the failed job, never live ones", olderThan: t0.Add(DeliveryRetention + time.Hour), want: 1,
				gone: []*Job{done, failed}, kept: []*Job{running, queued}},
			{name: "again is a no-op", olderThan: t0.Add(DeliveryRetention + time.Hour),
				gone: []*Job{done, failed}, kept: []*Job{running, queued}},
			{name: "zero time prunes nothing", kept: []*Job{running, queued}},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				n, err := s.PruneDone(ctx, st.olderThan)
				require.NoError(t, err)
				require.Equal(t, st.want, n)
				for _, j := range st.gone {
					_, err := s.GetJob(ctx, j.ID)
					require.ErrorIs(t, err, ErrNotFound)
				}
				for _, j := range st.kept {
					require.Equal(t, j.ID, getJob(t, s, j.ID).ID)
					// a kept job's delivery still refuses a redelivery
					require.ErrorIs(t, s.Enqueue(ctx, &Job{DeliveryID: j.DeliveryID}, 0), ErrDuplicate)
				}
			})
		}

		// A pruned job's delivery is forgotten with it.
		again := &Job{DeliveryID: done.DeliveryID, Kind: "event"}
		require.NoError(t, s.Enqueue(ctx, again, 0))
		require.Greater(t, again.ID, queued.ID)
		require.Equal(t, 2, countQueued(t, s))
	})

	t.Run("prunes more than one chunk", func(t *testing.T) {
		s := open(t, newClock())
		const jobs = pruneChunk*2 + 7 // more than one transaction's worth
		for i := range jobs {
			enqueue(t, s, fmt.Sprintf("d%d", i), "event", nil)
			j := claim(t, s, "w")
			require.NoError(t, s.Complete(ctx, j.ID, j.Owner, nil))
		}
		n, err := s.PruneDone(ctx, t0.Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, jobs, n)
		require.NoError(t, s.Enqueue(ctx, &Job{DeliveryID: "d0"}, 0))
	})
}
