package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/store/storetest"
)

func TestBoltJobAdmin(t *testing.T) {
	testJobAdmin(t, func(t *testing.T, clk *fakeclock.Clock) Store {
		return openBolt(t, filepath.Join(t.TempDir(), "shardgate.db"), WithClock(clk.Now))
	})
}

func TestPostgresJobAdmin(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	testJobAdmin(t, func(t *testing.T, clk *fakeclock.Clock) Store {
		return openPostgres(t, storetest.PostgresURL(t), WithPostgresClock(clk.Now))
	})
}

func ids(jobs []*Job) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

// testJobAdmin is what the automation API does to jobs, on every store.
func testJobAdmin(t *testing.T, open opener) {
	ctx := context.Background()
	list := func(t *testing.T, s Store, state JobState, after string, limit int) []*Job {
		t.Helper()
		jobs, err := s.(JobAdmin).JobsByState(ctx, state, after, limit)
		require.NoError(t, err)
		return jobs
	}

	t.Run("lists by state, a page at a time after a cursor", func(t *testing.T) {
		s, clk := open.freshClock(t)
		a := enqueue(t, s, "a", "event", []byte(`{"a":1}`))
		b := enqueue(t, s, "b", "event", nil)
		c := enqueue(t, s, "c", "event", nil)
		d := enqueue(t, s, "d", "event", nil)
		require.Equal(t, a.ID, claim(t, s, "w").ID)
		require.NoError(t, s.Complete(ctx, a.ID, "w", errors.New("boom")))
		require.Equal(t, b.ID, claim(t, s, "w").ID)
		require.NoError(t, s.Retry(ctx, b.ID, "w", errors.New("502"), clk.Now().Add(time.Hour)))
		require.Equal(t, c.ID, claim(t, s, "w").ID)

		require.Equal(t, []string{a.ID}, ids(list(t, s, JobFailed, "", 10)))
		require.Equal(t, []byte(`{"a":1}`), list(t, s, JobFailed, "", 10)[0].Payload)
		require.Equal(t, []string{c.ID}, ids(list(t, s, JobRunning, "", 10)))
		require.Equal(t, []string{b.ID, d.ID}, ids(list(t, s, JobQueued, "", 10)), "a job waiting for its retry is queued")
		require.Equal(t, []string{b.ID}, ids(list(t, s, JobQueued, "", 1)))
		require.Equal(t, []string{d.ID}, ids(list(t, s, JobQueued, b.ID, 1)))
		require.Empty(t, list(t, s, JobQueued, d.ID, 1))
		require.Empty(t, list(t, s, JobFailed, a.ID, 10))
	})

	t.Run("cancel ends a queued job unrun, also one waiting for its retry", func(t *testing.T) {
		s, clk := open.freshClock(t)
		a := enqueue(t, s, "a", "event", nil)
		b := enqueue(t, s, "b", "event", nil)
		require.Equal(t, a.ID, claim(t, s, "w").ID)
		require.NoError(t, s.Retry(ctx, a.ID, "w", errors.New("502"), clk.Now().Add(time.Minute)))
		require.Equal(t, 2, countQueued(t, s))

		for _, id := range []string{b.ID, a.ID} {
			got, err := s.(JobAdmin).CancelQueued(ctx, id, "by api token ci")
			require.NoError(t, err)
			require.Equal(t, JobDone, got.State)
			require.Equal(t, "cancelled: by api token ci", got.LastError)
			require.Equal(t, got.State, getJob(t, s, id).State)
		}
		require.Zero(t, countQueued(t, s))
		clk.Advance(time.Hour)
		require.Nil(t, claim(t, s, "w"), "a cancelled job never runs")
		n, err := s.PruneDone(ctx, clk.Now().Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, 2, n, "cancelled jobs are finished ones, pruned as such")
	})

	t.Run("a cancelled retry no longer holds back its lane", func(t *testing.T) {
		s, clk := open.freshClock(t)
		a := enqueueFor(t, s, "a", 1, "o/r#1", "")
		require.Equal(t, a.ID, claim(t, s, "w").ID)
		require.NoError(t, s.Retry(ctx, a.ID, "w", errors.New("502"), clk.Now().Add(time.Hour)))
		enqueueFor(t, s, "b", 1, "o/r#1", "")
		require.Empty(t, claimedDelivery(t, s, "w"), "b waits behind a's retry in its lane")
		_, err := s.(JobAdmin).CancelQueued(ctx, a.ID, "by api token ci")
		require.NoError(t, err)
		require.Equal(t, "b", claimedDelivery(t, s, "w"), "with a cancelled, b is the lane's next")
	})

	t.Run("cancel refuses running and finished jobs and unknown ids", func(t *testing.T) {
		s := open.fresh(t)
		a := enqueue(t, s, "a", "event", nil)
		claim(t, s, "w")
		_, err := s.(JobAdmin).CancelQueued(ctx, a.ID, "x")
		require.ErrorIs(t, err, ErrNotQueued)
		require.Equal(t, JobRunning, getJob(t, s, a.ID).State)
		require.NoError(t, s.Complete(ctx, a.ID, "w", nil))
		_, err = s.(JobAdmin).CancelQueued(ctx, a.ID, "x")
		require.ErrorIs(t, err, ErrNotQueued)
		_, err = s.(JobAdmin).CancelQueued(ctx, "00000000000000009999", "x")
		require.ErrorIs(t, err, ErrNotFound)
	})

	t.Run("requeue runs a failed job again, attempts reset, and only a failed one", func(t *testing.T) {
		s, clk := open.freshClock(t)
		a := enqueue(t, s, "a", "event", []byte("p"))
		claim(t, s, "w")
		require.NoError(t, s.Complete(ctx, a.ID, "w", errors.New("422 Unprocessable")))
		b := enqueue(t, s, "b", "event", nil)

		got, err := s.(JobAdmin).RequeueFailed(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, JobQueued, got.State)
		require.Zero(t, got.Attempts)
		require.Equal(t, "422 Unprocessable", got.LastError, "kept until it runs")
		require.Equal(t, 2, countQueued(t, s))
		require.Empty(t, list(t, s, JobFailed, "", 10))

		again := claim(t, s, "w")
		require.Equal(t, a.ID, again.ID, "at its place, before younger jobs")
		require.Equal(t, 1, again.Attempts)
		require.Equal(t, []byte("p"), again.Payload)
		require.NoError(t, s.Complete(ctx, a.ID, "w", nil))
		n, err := s.PruneDone(ctx, clk.Now().Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, n, "the retried job is pruned once, when it ended again")

		_, err = s.(JobAdmin).RequeueFailed(ctx, b.ID)
		require.ErrorIs(t, err, ErrNotQueued, "a queued job is not requeued")
		_, err = s.(JobAdmin).RequeueFailed(ctx, "nope")
		require.ErrorIs(t, err, ErrNotFound)
	})
}
