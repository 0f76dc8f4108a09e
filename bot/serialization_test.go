package bot

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/storeopen"
)

// Thirty merged pull requests over six streams, applied by the real apply
// queue and scheduler against the coordinator simulator. Each job scales its
// stream and waits until it is complete and safe, as the apply pipeline does.
// The simulator refuses a scale while another migration of the stream is
// active (409 ACTIVE_MIGRATION_EXISTS), so its audit log proves the order:
// no refused scale (no overlap), per-stream order equal to merge order, and
// the streams ran in parallel (total time well under the serial sum).
func TestSerializationAgainstTheSimulator(t *testing.T) {
	sim := coordsim.New(coordsim.WithMembersPerGroup(2))
	srv := httptest.NewServer(sim)
	defer srv.Close()
	simCtx, stopSim := context.WithCancel(context.Background())
	defer stopSim()
	go sim.Run(simCtx, 20*time.Millisecond)
	c, err := coord.New(srv.URL, coord.WithBasicAuth("admin", "password"), coord.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	streams := []string{"s0", "s1", "s2", "s3", "s4", "s5"}
	for _, s := range streams {
		for _, g := range []string{"a", "b"} {
			_, err := c.CreateGroup(context.Background(), s, g, coord.CreateRequest{InitialShardCount: 2, RequestedBy: "setup"})
			require.NoError(t, err)
		}
	}

	st := storeopen.Bolt(t, "")
	q := applyqueue.New(st, "test", time.Minute, nil)
	var mu sync.Mutex
	durations := map[string]time.Duration{}
	run := func(ctx context.Context, job *applyqueue.Job) (applyqueue.State, string) {
		start := time.Now()
		stream := job.Streams[0]
		target := 3 + job.Ref.Number // every merge asks for a new count
		rctx := coord.WithRequestID(ctx, fmt.Sprintf("merge-%s-pr-%d", job.Seq, job.Ref.Number))
		if _, err := c.ScaleStream(rctx, stream, coord.ScaleRequest{TargetShardCount: target, RequestedBy: fmt.Sprintf("pr-%d", job.Ref.Number), Reason: "merged"}); err != nil {
			return applyqueue.Failed, err.Error()
		}
		if err := c.WaitConverged(ctx, stream, target, nil); err != nil {
			return applyqueue.Failed, err.Error()
		}
		mu.Lock()
		durations[job.Seq] = time.Since(start)
		mu.Unlock()
		return applyqueue.Applied, "converged"
	}
	sched := applyqueue.NewScheduler(q, run, logctx.Logger(context.Background()))
	sched.Poll = 20 * time.Millisecond

	mergeOrder := map[string][]int{} // stream -> PR numbers in merge order
	for i := 0; i < 30; i++ {
		stream := streams[(i*7)%len(streams)]
		job := &applyqueue.Job{Ref: pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: i + 1}, Project: "streams",
			Streams: []string{stream}, MergeSHA: fmt.Sprintf("sha%02d", i)}
		require.NoError(t, q.Enqueue(context.Background(), job))
		mergeOrder[stream] = append(mergeOrder[stream], i+1)
	}
	start := time.Now()
	require.NoError(t, sched.Start(context.Background()))
	defer sched.Close(context.Background())
	require.Eventually(t, func() bool {
		jobs, err := q.List(context.Background())
		if err != nil {
			return false
		}
		for _, j := range jobs {
			if !j.State.Finished() {
				return false
			}
		}
		return true
	}, 2*time.Minute, 20*time.Millisecond)
	makespan := time.Since(start)

	jobs, err := q.List(context.Background())
	require.NoError(t, err)
	var serial time.Duration
	for _, j := range jobs {
		require.Equal(t, applyqueue.Applied, j.State, j.Reason)
		serial += durations[j.Seq]
	}

	// From the simulator's audit log: every scale accepted (none overlapped an
	// active migration), and per stream in merge order.
	seen := map[string][]int{}
	events := sim.Audit()
	sort.SliceStable(events, func(i, j int) bool { return events[i].Timestamp.Before(events[j].Timestamp) })
	for _, e := range events {
		if e.Action != coordsim.ActionScaleStream {
			continue
		}
		require.Equal(t, "SUCCESS", e.Outcome, "a scale overlapped another migration of %s: %+v", e.StreamPrefix, e)
		var pr int
		_, err := fmt.Sscanf(e.RequestedBy, "pr-%d", &pr)
		require.NoError(t, err)
		seen[e.StreamPrefix] = append(seen[e.StreamPrefix], pr)
	}
	require.Equal(t, mergeOrder, seen, "per-stream order equals merge order")
	t.Logf("makespan %s, serial sum %s", makespan, serial)
	require.Less(t, makespan, serial*2/3, "different streams ran in parallel")
}
