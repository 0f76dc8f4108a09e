//go:build unix

package applyqueue

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
)

// BenchmarkApplyScheduler runs 1,000 fake applies of 2 ms over 50 streams
// (1-2 random streams each, seeded) on a Bolt store with fsync on ("fsync"),
// and again without ("nosync") to tell the store's write latency from the
// scheduler's own cost. It reports the makespan, the critical path (the
// makespan of a scheduler with no overhead) and the overhead per job: the
// makespan beyond the critical path, and the process's CPU time, divided by
// the number of jobs.
func BenchmarkApplyScheduler(b *testing.B) {
	const n, streams, d = 1000, 50, 2 * time.Millisecond
	rng := rand.New(rand.NewPCG(6, 50))
	jobs := make([]applySim, n)
	for i := range jobs {
		ss := []string{fmt.Sprintf("s%02d", rng.IntN(streams))}
		if rng.IntN(2) == 1 {
			ss = append(ss, fmt.Sprintf("s%02d", rng.IntN(streams)))
		}
		jobs[i] = applySim{project: fmt.Sprintf("p%04d", i), streams: ss, d: d}
	}
	cp := applyCriticalPath(jobs)
	for _, bc := range []struct {
		name string
		opts []store.BoltOption
	}{{"fsync", nil}, {"nosync", []store.BoltOption{store.WithoutSync()}}} {
		b.Run(bc.name, func(b *testing.B) {
			var makespan, cpu time.Duration
			for range b.N {
				b.StopTimer()
				q, closeStore := enqueueApplyBench(b, jobs, bc.opts)
				rec := newApplyRecorder(jobs)
				cpu0 := applyCPU()
				b.StartTimer()
				makespan += runApplyBench(b, q, rec, n)
				b.StopTimer()
				cpu += applyCPU() - cpu0
				rec.check(b, n)
				closeStore()
			}
			runs := time.Duration(b.N)
			b.ReportMetric(float64((makespan / runs).Milliseconds()), "makespan-ms")
			b.ReportMetric(float64(cp.Milliseconds()), "critical-path-ms")
			b.ReportMetric(float64((makespan/runs-cp).Nanoseconds())/n, "overhead-ns/job")
			b.ReportMetric(float64((cpu/runs).Nanoseconds())/n, "cpu-ns/job")
		})
	}
}

// enqueueApplyBench enqueues jobs without fsync (two writes per job that
// this benchmark is not about), then reopens the store with opts for the
// scheduling, whose lease and finish writes are what it measures.
func enqueueApplyBench(b *testing.B, jobs []applySim, opts []store.BoltOption) (*Queue, func()) {
	path := filepath.Join(b.TempDir(), "store.db")
	st, err := store.OpenBolt(path, store.WithoutSync())
	require.NoError(b, err)
	setup := New(st, "setup", 0, nil)
	for _, j := range jobs {
		require.NoError(b, setup.Enqueue(context.Background(), &Job{Ref: applyTestRef, Project: j.project, Streams: j.streams}))
	}
	require.NoError(b, st.Close())
	st, err = store.OpenBolt(path, opts...)
	require.NoError(b, err)
	return New(st, "bench", time.Minute, nil), func() { require.NoError(b, st.Close()) }
}

// runApplyBench runs the already enqueued jobs and returns the time from
// the scheduler's start until every job's outcome is stored.
func runApplyBench(b *testing.B, q *Queue, rec *applyRecorder, n int) time.Duration {
	ctx := context.Background()
	start := time.Now()
	s := NewScheduler(q, rec.run, logctx.NewLogger(io.Discard, logrus.WarnLevel))
	s.Poll = 50 * time.Millisecond
	require.NoError(b, s.Start(ctx))
	for {
		rec.mu.Lock()
		done := len(rec.spans)
		rec.mu.Unlock()
		if done == n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// The last Finish is written after the run returns.
	require.Eventually(b, func() bool {
		all, err := q.List(ctx)
		return err == nil && !slices.ContainsFunc(all, func(j *Job) bool { return !j.State.Finished() })
	}, time.Minute, time.Millisecond)
	elapsed := time.Since(start)
	require.NoError(b, s.Close(ctx))
	return elapsed
}

// applyCPU is the CPU time (user and system) this process has used so far.
func applyCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
