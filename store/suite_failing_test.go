package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

// testFailing: the jobs the status page shows as failing, from either store.
func testFailing(t *testing.T, open opener) {
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC))
	s := open(t, clk)
	ids := func(jobs []*Job) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}

	// A job failing for good an hour ago, one failing now, one done, one
	// waiting for its retry, one running again after a failed attempt, one
	// only queued and one running for the first time.
	old := enqueue(t, s, "old", "event", []byte(`{"n":1}`))
	require.NoError(t, s.Complete(ctx, claim(t, s, "w").ID, "w", errors.New("gone for good earlier")))
	clk.Advance(time.Hour)
	failed := enqueue(t, s, "failed", "event", []byte(`{"n":2}`))
	require.NoError(t, s.Complete(ctx, claim(t, s, "w").ID, "w", errors.New("GitHub answered 500")))
	done := enqueue(t, s, "done", "event", nil)
	require.NoError(t, s.Complete(ctx, claim(t, s, "w").ID, "w", nil))
	clk.Advance(time.Second)
	retrying := enqueue(t, s, "retrying", "event", []byte(`{"n":3}`))
	require.NoError(t, s.Retry(ctx, claim(t, s, "w").ID, "w", errors.New("connection refused"), clk.Now().Add(time.Minute)))
	clk.Advance(time.Second)
	again := enqueue(t, s, "again", "event", nil)
	require.NoError(t, s.Retry(ctx, claim(t, s, "w").ID, "w", errors.New("timeout"), clk.Now()))
	require.Equal(t, again.ID, claim(t, s, "w2").ID, "the due retry is claimed again")
	clk.Advance(time.Second)
	enqueue(t, s, "running", "event", nil)
	enqueue(t, s, "queued", "event", nil)
	require.NotNil(t, claim(t, s, "w3"))

	got, err := s.FailingJobs(ctx, clk.Now().Add(-30*time.Minute), 10)
	require.NoError(t, err)
	require.Equal(t, []string{again.ID, retrying.ID, failed.ID}, ids(got), "newest change first; %s before the window, %s done", old.ID, done.ID)
	require.Equal(t, JobRunning, got[0].State)
	require.Equal(t, "timeout", got[0].LastError)
	require.Equal(t, 2, got[0].Attempts)
	require.Equal(t, JobQueued, got[1].State)
	require.Equal(t, "connection refused", got[1].LastError)
	require.True(t, got[1].NotBefore.After(clk.Now()), "the next try is ahead")
	require.Equal(t, []byte(`{"n":3}`), got[1].Payload, "with its payload")
	require.Equal(t, JobFailed, got[2].State)
	require.Equal(t, "GitHub answered 500", got[2].LastError)

	got, err = s.FailingJobs(ctx, clk.Now().Add(-2*time.Hour), 10)
	require.NoError(t, err)
	require.Equal(t, []string{again.ID, retrying.ID, failed.ID, old.ID}, ids(got))
	got, err = s.FailingJobs(ctx, clk.Now().Add(-2*time.Hour), 2)
	require.NoError(t, err)
	require.Equal(t, []string{again.ID, retrying.ID}, ids(got), "at most n")
}
