package applyqueue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
)

// A merge train of one repository (four applies on disjoint streams, all
// runnable at once) must not hold every slot while another repository's
// apply, merged after them, waits: with two slots, the second goes to the
// other repository, and each freed slot to the repository running fewer.
func TestApplySchedulerFairAcrossRepositories(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC))
	_, st := newApplyTestQueue(t, "unused")
	q := New(st, "p1", time.Minute, clock.Now)
	train := pullreq.Ref{Installation: 1, Owner: "acme", Repo: "infra", Number: 7}
	other := pullreq.Ref{Installation: 1, Owner: "acme", Repo: "billing", Number: 3}
	var a []*Job
	for _, p := range []string{"a1", "a2", "a3", "a4"} {
		j := &Job{Ref: train, Project: p, Streams: []string{p}}
		require.NoError(t, q.Enqueue(context.Background(), j))
		a = append(a, j)
	}
	b1 := &Job{Ref: other, Project: "b1", Streams: []string{"b1"}}
	require.NoError(t, q.Enqueue(context.Background(), b1))
	b2 := &Job{Ref: other, Project: "b2", Streams: []string{"b2"}}
	require.NoError(t, q.Enqueue(context.Background(), b2))

	release := map[string]chan struct{}{}
	for _, p := range []string{"a1", "a2", "a3", "a4", "b1", "b2"} {
		release[p] = make(chan struct{})
	}
	started := make(chan string, 6)
	passes, watch := watchPasses()
	s := startApplyScheduler(t, q, func(ctx context.Context, job *Job) (State, string) {
		started <- job.Project
		awaitRelease(ctx, release[job.Project])
		return Applied, ""
	}, watch, WithMaxConcurrent(2))
	require.ElementsMatch(t, []string{"a1", "b1"}, []string{<-started, <-started},
		"the other repository's apply takes the second slot, not a2")
	require.Equal(t, []string{a[0].Seq, b1.Seq}, passes.started(t, s))
	close(release["b1"])
	require.Equal(t, "b2", <-started, "b's slot freed, b runs none and a one: b2 goes before a2")
	close(release["a1"])
	require.Equal(t, "a2", <-started)
	close(release["b2"])
	require.Equal(t, "a3", <-started, "b has nothing left: the train goes on in merge order")
	for _, p := range []string{"a2", "a3", "a4"} {
		close(release[p])
	}
	require.Equal(t, "a4", <-started)
	for _, j := range append(a, b1, b2) {
		waitApplyState(t, q, j.Seq, Applied)
	}
}
