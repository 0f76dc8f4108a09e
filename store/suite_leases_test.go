package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

func testLeases(t *testing.T, open opener) {
	ctx := context.Background()

	t.Run("heartbeat", func(t *testing.T) {
		s := open.fresh(t)
		j := enqueue(t, s, "d", "event", nil)
		require.Equal(t, j.ID, claim(t, s, "w1").ID)
		tests := []struct {
			name, id, owner string
			wantErr         error
		}{
			{name: "by the owner of a running job", id: j.ID, owner: "w1"},
			{name: "by another owner", id: j.ID, owner: "w2", wantErr: ErrLeaseLost},
			{name: "by no owner", id: j.ID, owner: "", wantErr: ErrLeaseLost},
			{name: "of an unknown job", id: "00000000000000000099", owner: "w1", wantErr: ErrNotFound},
			{name: "of a malformed id", id: "nope", owner: "w1", wantErr: ErrNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := s.Heartbeat(ctx, tt.id, tt.owner)
				if tt.wantErr == nil {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, tt.wantErr)
				}
				got := getJob(t, s, j.ID)
				require.Equal(t, JobRunning, got.State, "a heartbeat never changes who runs the job")
				require.Equal(t, "w1", got.Owner)
			})
		}
	})

	// Once a job left its owner, the owner's heartbeat says so: it must stop.
	lost := []struct {
		name  string
		leave func(t *testing.T, s Store, clk *fakeclock.Clock, id string)
	}{
		{name: "completed", leave: func(t *testing.T, s Store, _ *fakeclock.Clock, id string) {
			require.NoError(t, s.Complete(ctx, id, "w1", nil))
		}},
		{name: "failed", leave: func(t *testing.T, s Store, _ *fakeclock.Clock, id string) {
			require.NoError(t, s.Complete(ctx, id, "w1", errors.New("boom")))
		}},
		{name: "released", leave: func(t *testing.T, s Store, _ *fakeclock.Clock, id string) {
			require.NoError(t, s.Release(ctx, id, "w1"))
		}},
		{name: "retried", leave: func(t *testing.T, s Store, clk *fakeclock.Clock, id string) {
			require.NoError(t, s.Retry(ctx, id, "w1", errors.New("502"), clk.Now().Add(time.Hour)))
		}},
		{name: "recovered after its lease and claimed by another", leave: func(t *testing.T, s Store, clk *fakeclock.Clock, id string) {
			clk.Advance(pastAnyLease)
			n, err := s.RecoverRunning(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			again := claim(t, s, "w2")
			require.Equal(t, id, again.ID)
			require.NoError(t, s.Heartbeat(ctx, id, "w2"), "the new owner holds it")
		}},
	}
	for _, tt := range lost {
		t.Run("heartbeat of a job "+tt.name+" is lease lost", func(t *testing.T) {
			clk := fakeclock.Following()
			s := open(t, clk)
			j := enqueue(t, s, "d", "event", nil)
			require.Equal(t, j.ID, claim(t, s, "w1").ID)
			tt.leave(t, s, clk, j.ID)
			require.ErrorIs(t, s.Heartbeat(ctx, j.ID, "w1"), ErrLeaseLost)
		})
	}

	t.Run("reclaim never takes a live or renewed lease", func(t *testing.T) {
		clk := fakeclock.Following()
		s := open(t, clk)
		a := enqueue(t, s, "a", "event", nil)
		b := enqueue(t, s, "b", "event", nil)
		require.Equal(t, a.ID, claim(t, s, "w1").ID)
		require.Equal(t, b.ID, claim(t, s, "w1").ID)
		for range 5 {
			n, err := s.ReclaimExpired(ctx)
			require.NoError(t, err)
			require.Zero(t, n)
			require.NoError(t, s.Heartbeat(ctx, a.ID, "w1"))
			require.NoError(t, s.Heartbeat(ctx, b.ID, "w1"))
			clk.Advance(time.Second) // well within any lease, renewed each time
		}
		for _, id := range []string{a.ID, b.ID} {
			got := getJob(t, s, id)
			require.Equal(t, JobRunning, got.State)
			require.Equal(t, "w1", got.Owner)
		}
		require.Nil(t, claim(t, s, "w2"))
	})
}

// Complete, Release and Retry are the owner's: a worker whose job was taken
// over (its lease expired while it stalled) cannot finish or hand back the
// new owner's run.
func testOwnerChecks(t *testing.T, open opener) {
	ctx := context.Background()
	ops := []struct {
		name string
		do   func(s Store, id, owner string) error
	}{
		{name: "complete", do: func(s Store, id, owner string) error { return s.Complete(ctx, id, owner, nil) }},
		{name: "fail", do: func(s Store, id, owner string) error { return s.Complete(ctx, id, owner, errors.New("x")) }},
		{name: "release", do: func(s Store, id, owner string) error { return s.Release(ctx, id, owner) }},
		{name: "retry", do: func(s Store, id, owner string) error {
			return s.Retry(ctx, id, owner, errors.New("502"), time.Now().Add(time.Hour))
		}},
	}
	for _, op := range ops {
		t.Run(op.name+" by another owner is lease lost", func(t *testing.T) {
			s := open.fresh(t)
			j := enqueue(t, s, "d", "event", nil)
			require.Equal(t, j.ID, claim(t, s, "w1").ID)
			before := getJob(t, s, j.ID)
			require.ErrorIs(t, op.do(s, j.ID, "w2"), ErrLeaseLost)
			require.ErrorIs(t, op.do(s, j.ID, ""), ErrLeaseLost)
			require.Equal(t, before, getJob(t, s, j.ID), "a refused transition changes nothing")
			require.NoError(t, op.do(s, j.ID, "w1"), "the owner still can")
		})
		t.Run(op.name+" by the owner a takeover replaced is lease lost", func(t *testing.T) {
			clk := fakeclock.Following()
			s := open(t, clk)
			j := enqueue(t, s, "d", "event", nil)
			require.Equal(t, j.ID, claim(t, s, "w1").ID)
			clk.Advance(pastAnyLease)
			_, err := s.RecoverRunning(ctx)
			require.NoError(t, err)
			require.Equal(t, j.ID, claim(t, s, "w2").ID)
			require.ErrorIs(t, op.do(s, j.ID, "w1"), ErrLeaseLost, "the stalled first owner wakes up")
			got := getJob(t, s, j.ID)
			require.Equal(t, JobRunning, got.State)
			require.Equal(t, "w2", got.Owner)
			require.NoError(t, s.Heartbeat(ctx, j.ID, "w2"))
		})
	}
}
