package store

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store/storetest"
)

// drainStores are the stores the drain benchmark runs on, without waiting
// for the disk at each commit (bbolt without fsync, PostgreSQL with
// synchronous_commit off): the benchmark weighs what a claim costs as the
// backlog shrinks, and a commit's flush costs the same at any backlog
// (BenchmarkEnqueueAt measures it).
var drainStores = []benchStore{
	{name: "bolt", open: func(b *testing.B) Store {
		return openBolt(b, filepath.Join(b.TempDir(), "shardgate.db"), WithoutSync())
	}},
	{name: "postgres", open: func(b *testing.B) Store {
		url := storetest.PostgresURL(b) // skips, saying why, without a database
		return openPostgres(b, storetest.WithParams(b, url, map[string]string{
			"pool_max_conns": strconv.Itoa(DefaultPostgresConns), "synchronous_commit": "off"}))
	}},
}

// BenchmarkDrain100k enqueues 100,000 jobs across 1,000 pull requests of 50
// installations (a tenth of them comments, each of which a claim coalesces
// with at most one other; one in 500 a merge group's job of priority 1) and drains them with four
// workers while intake goes on at 100 deliveries a second. It reports the
// mean time of a claim over the first and the last 2% of the backlog's claims
// (claim-start-ms, claim-end-ms) and their ratio, the larger over the
// smaller (claim-ratio: a claim that walks the backlog is slower at the
// start), and the p99 of intake's enqueue latency while draining; beside
// them, the claiming thread's CPU time over the same claims
// (claim-cpu-start-us, claim-cpu-end-us, claim-cpu-ratio; Linux only), which
// a loaded host stretches far less than the wall time.
func BenchmarkDrain100k(b *testing.B) { benchDrain(b, 100_000) }

// BenchmarkDrain10k is BenchmarkDrain100k at a tenth of the backlog.
func BenchmarkDrain10k(b *testing.B) { benchDrain(b, 10_000) }

const (
	drainPRs           = 1000
	drainInstallations = 50
	drainWorkers       = 4
	drainIntakeRate    = 100
)

// drainJob gives the i-th job of the backlog its identity: pull request i
// mod 1,000, whose installation is its number mod 50.
func drainJob(i int64, j *Job) {
	pr := i % drainPRs
	j.Installation = 1 + pr%drainInstallations
	j.Lane = fmt.Sprintf("o/r%d#%d", j.Installation, pr)
	// A comment: each pull request has two in a row (rounds t and t+1
	// sharing a key) every 20 rounds, the pull requests shifted against
	// each other, so a claim coalesces at most one other job and every part
	// of the backlog holds as many coalescing claims: the first and the last
	// 2% are compared for the backlog alone (comments all in round 0 once
	// made half the first 2% coalesce and none of the last).
	if t := i/drainPRs + pr%20; t%20 < 2 {
		j.CoalesceKey = j.Lane + " @alice plan " + strconv.FormatInt(t/20, 10)
	}
	if i%500 == 0 {
		j.Priority = 1
	}
}

func benchDrain(b *testing.B, n int) {
	for _, bs := range drainStores {
		b.Run(bs.name, func(b *testing.B) {
			for range b.N {
				runDrain(b, bs, n)
			}
		})
	}
}

func runDrain(b *testing.B, bs benchStore, n int) {
	b.StopTimer()
	ctx := context.Background()
	s := bs.open(b)
	payload := make([]byte, 512)
	fillWith(b, s, n, payload, drainJob)
	queued, err := s.CountQueued(ctx)
	require.NoError(b, err)
	require.Equal(b, n, queued)
	b.StartTimer()

	var mu sync.Mutex
	// The backlog's claims in the order they ended: the workers are busy
	// throughout them, so the first and the last are timed alike but for
	// the backlog (intake's, once the backlog is gone, would be timed on
	// idle workers).
	var claims, claimsCPU []time.Duration
	var done atomic.Int64 // jobs of the backlog finished, coalesced ones included
	intakeDone := make(chan struct{})
	var latencies []time.Duration
	go func() {
		defer close(intakeDone)
		latencies = intake(b, s, payload, func() bool { return done.Load() >= int64(n) })
	}()
	var wg sync.WaitGroup
	for w := range drainWorkers {
		wg.Go(func() {
			owner := fmt.Sprintf("drain-%d", w)
			// On its own thread, so that the thread's CPU clock is this
			// worker's claim alone.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for {
				t0, c0 := time.Now(), threadCPU()
				j, err := s.Claim(ctx, owner)
				d, cpu := time.Since(t0), threadCPU()-c0
				if err != nil {
					b.Errorf("claim: %v", err)
					return
				}
				if j == nil {
					select {
					case <-intakeDone:
						return
					case <-time.After(time.Millisecond): // idle poll, as the dispatcher's
						continue
					}
				}
				if j.Kind == "event" { // the backlog's, not intake's
					mu.Lock()
					claims, claimsCPU = append(claims, d), append(claimsCPU, cpu)
					mu.Unlock()
					done.Add(int64(1 + len(j.Coalesced)))
				}
				if err := s.Complete(ctx, j.ID, owner, nil); err != nil {
					b.Errorf("complete: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	left, err := s.CountQueued(ctx)
	require.NoError(b, err)
	require.Zero(b, left, "drained")

	window := max(len(claims)/50, 1)
	start, end := mean(claims[:window]), mean(claims[len(claims)-window:])
	b.ReportMetric(ms(start), "claim-start-ms")
	b.ReportMetric(ms(end), "claim-end-ms")
	b.ReportMetric(float64(max(start, end))/float64(max(min(start, end), 1)), "claim-ratio")
	if cs, ce := mean(claimsCPU[:window]), mean(claimsCPU[len(claimsCPU)-window:]); cs > 0 && ce > 0 {
		// The claim's own CPU time (the claiming thread's, user and
		// system): what the load of other processes stretches least.
		b.ReportMetric(float64(cs.Microseconds()), "claim-cpu-start-us")
		b.ReportMetric(float64(ce.Microseconds()), "claim-cpu-end-us")
		b.ReportMetric(float64(max(cs, ce))/float64(min(cs, ce)), "claim-cpu-ratio")
	}
	slices.Sort(latencies)
	if len(latencies) > 0 {
		b.ReportMetric(ms(latencies[len(latencies)*99/100]), "intake-p99-ms")
	}
	b.ReportMetric(float64(len(claims))/b.Elapsed().Seconds(), "backlog-claims/s")
}

// intake enqueues deliveries of new pull requests at drainIntakeRate, open
// loop, until stop says so, and returns each enqueue's latency.
func intake(b *testing.B, s Store, payload []byte, stop func() bool) []time.Duration {
	var mu sync.Mutex
	var out []time.Duration
	var wg sync.WaitGroup
	interval := time.Second / drainIntakeRate
	start := time.Now()
	for i := 0; !stop(); i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval))) // pacing the load, not a clock
		wg.Go(func() {
			j := &Job{DeliveryID: fmt.Sprintf("intake-%d", i), Kind: "intake", Payload: payload,
				Installation: int64(1 + i%drainInstallations), Lane: fmt.Sprintf("o/new#%d", i)}
			t0 := time.Now()
			err := s.Enqueue(context.Background(), j, 1<<30)
			d := time.Since(t0)
			if err != nil {
				b.Errorf("enqueue: %v", err)
			}
			mu.Lock()
			out = append(out, d)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
