package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func testTransitions(t *testing.T, open opener) {
	ctx := context.Background()

	t.Run("complete", func(t *testing.T) {
		tests := []struct {
			name      string
			jobErr    error
			wantState JobState
			wantError string
		}{
			{name: "success is done", wantState: JobDone},
			{name: "error is failed with its text", jobErr: errors.New("terraform plan: exit status 1"),
				wantState: JobFailed, wantError: "terraform plan: exit status 1"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := open.fresh(t)
				j := enqueue(t, s, "d", "event", []byte("p"))
				claim(t, s, "w")
				require.NoError(t, s.Complete(ctx, j.ID, "w", tt.jobErr))
				got := getJob(t, s, j.ID)
				require.Equal(t, tt.wantState, got.State)
				require.Equal(t, tt.wantError, got.LastError)
				require.Equal(t, 1, got.Attempts)
				require.False(t, got.UpdatedAt.Before(got.CreatedAt))
				require.Equal(t, []byte("p"), got.Payload)
				require.Zero(t, countQueued(t, s))
				n, err := s.RecoverRunning(ctx)
				require.NoError(t, err)
				require.Zero(t, n, "a finished job is not running")
			})
		}
	})

	t.Run("retry holds the job back until its time, then before younger ones", func(t *testing.T) {
		s, clk := open.freshClock(t)
		a := enqueue(t, s, "a", "a", nil)
		require.Equal(t, a.ID, claim(t, s, "w1").ID)
		require.NoError(t, s.Retry(ctx, a.ID, "w1", errors.New("GitHub: 502 Bad Gateway"), clk.Now().Add(time.Hour)))
		got := getJob(t, s, a.ID)
		require.Equal(t, JobQueued, got.State)
		require.Equal(t, "GitHub: 502 Bad Gateway", got.LastError)
		next, err := s.Claim(ctx, "w1")
		require.NoError(t, err)
		require.Nil(t, next, "not claimable before its time")
		require.Equal(t, 1, countQueued(t, s), "a job waiting for its retry is queued")
		require.ErrorIs(t, s.Enqueue(ctx, &Job{DeliveryID: "over", Kind: "x"}, 1), ErrQueueFull,
			"and counts toward maxQueued")
		n, err := s.RecoverRunning(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "a job waiting to be retried is not running")

		b := enqueue(t, s, "b", "b", nil)
		c := enqueue(t, s, "c", "c", nil)
		require.Equal(t, b.ID, claim(t, s, "w1").ID)
		require.NoError(t, s.Retry(ctx, b.ID, "w1", errors.New("reset"), clk.Now().Add(-time.Second)))
		again := claim(t, s, "w2")
		require.Equal(t, b.ID, again.ID, "a due retry goes before younger jobs")
		require.Equal(t, 2, again.Attempts)
		require.Equal(t, c.ID, claim(t, s, "w2").ID)
		require.ErrorIs(t, s.Retry(ctx, c.ID+"x", c.Owner, nil, clk.Now()), ErrNotFound)
	})

	t.Run("postpone holds the job back until its time without spending an attempt", func(t *testing.T) {
		s, clk := open.freshClock(t)
		a := enqueue(t, s, "a", "a", nil)
		b := enqueue(t, s, "b", "b", nil)
		require.Equal(t, a.ID, claim(t, s, "w1").ID)
		require.NoError(t, s.Postpone(ctx, a.ID, "w1", errors.New("GitHub rate limit until 14:05"), clk.Now().Add(time.Hour)))
		got := getJob(t, s, a.ID)
		require.Equal(t, JobQueued, got.State)
		require.Zero(t, got.Attempts, "a wait for GitHub is not an attempt")
		require.Equal(t, "GitHub rate limit until 14:05", got.LastError)
		require.Equal(t, 2, countQueued(t, s), "a postponed job is still queued")
		require.Equal(t, b.ID, claim(t, s, "w1").ID, "younger jobs run meanwhile")
		next, err := s.Claim(ctx, "w1")
		require.NoError(t, err)
		require.Nil(t, next, "not claimable before its time")

		require.NoError(t, s.Postpone(ctx, b.ID, "w1", nil, clk.Now().Add(-time.Second)))
		again := claim(t, s, "w2")
		require.Equal(t, b.ID, again.ID)
		require.Equal(t, 1, again.Attempts, "only claims that ran to an outcome count")
		require.ErrorIs(t, s.Postpone(ctx, b.ID, "w1", nil, clk.Now()), ErrLeaseLost)
		require.ErrorIs(t, s.Postpone(ctx, a.ID+"x", "w1", nil, clk.Now()), ErrNotFound)
	})

	t.Run("release makes the job claimable again before younger ones", func(t *testing.T) {
		s := open.fresh(t)
		a, b := enqueue(t, s, "a", "a", nil), enqueue(t, s, "b", "b", nil)
		require.Equal(t, a.ID, claim(t, s, "w1").ID)
		require.NoError(t, s.Release(ctx, a.ID, "w1"))
		got := getJob(t, s, a.ID)
		require.Equal(t, JobQueued, got.State)
		require.Empty(t, got.Owner)
		require.Equal(t, 2, countQueued(t, s))

		again := claim(t, s, "w2")
		require.Equal(t, a.ID, again.ID)
		require.Equal(t, 2, again.Attempts, "each claim is an attempt")
		require.Equal(t, "w2", again.Owner)
		require.Equal(t, b.ID, claim(t, s, "w2").ID)
	})

	t.Run("release is not refused by a full queue", func(t *testing.T) {
		s := open.fresh(t)
		a := enqueue(t, s, "a", "a", nil)
		claim(t, s, "w")
		require.NoError(t, s.Enqueue(ctx, &Job{Kind: "b"}, 1))
		require.NoError(t, s.Release(ctx, a.ID, "w"))
		require.Equal(t, 2, countQueued(t, s))
	})

	// Every state a job can be in when Complete or Release is not allowed.
	states := []struct {
		name    string
		prepare func(t *testing.T, s Store) string
		wantErr error
	}{
		{name: "unknown id", wantErr: ErrNotFound,
			prepare: func(t *testing.T, s Store) string { return "00000000000000000099" }},
		{name: "queued", wantErr: ErrNotRunning,
			prepare: func(t *testing.T, s Store) string { return enqueue(t, s, "", "x", nil).ID }},
		{name: "done", wantErr: ErrNotRunning, prepare: func(t *testing.T, s Store) string {
			id := enqueue(t, s, "", "x", nil).ID
			claim(t, s, "w")
			require.NoError(t, s.Complete(ctx, id, "w", nil))
			return id
		}},
		{name: "failed", wantErr: ErrNotRunning, prepare: func(t *testing.T, s Store) string {
			id := enqueue(t, s, "", "x", nil).ID
			claim(t, s, "w")
			require.NoError(t, s.Complete(ctx, id, "w", errors.New("boom")))
			return id
		}},
	}
	ops := []struct {
		name string
		do   func(s Store, id string) error
	}{
		{name: "complete", do: func(s Store, id string) error { return s.Complete(ctx, id, "w", nil) }},
		{name: "complete with error", do: func(s Store, id string) error { return s.Complete(ctx, id, "w", errors.New("x")) }},
		{name: "release", do: func(s Store, id string) error { return s.Release(ctx, id, "w") }},
	}
	for _, st := range states {
		for _, op := range ops {
			t.Run(op.name+" of "+st.name+" job", func(t *testing.T) {
				s := open.fresh(t)
				id := st.prepare(t, s)
				var before *Job
				if st.wantErr != ErrNotFound {
					before = getJob(t, s, id)
				}
				queued := countQueued(t, s)
				require.ErrorIs(t, op.do(s, id), st.wantErr)
				if before != nil {
					require.Equal(t, before, getJob(t, s, id), "a refused transition changes nothing")
				}
				require.Equal(t, queued, countQueued(t, s))
			})
		}
	}
}
