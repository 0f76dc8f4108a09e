package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store/storetest"
)

// benchStore is one store a benchmark runs on, durable as in production:
// bbolt fsyncs each batch, PostgreSQL commits as the server is configured
// (synchronous_commit on by default).
type benchStore struct {
	name string
	open func(b *testing.B) Store
}

var benchStores = []benchStore{
	{name: "bolt", open: func(b *testing.B) Store {
		return openBolt(b, filepath.Join(b.TempDir(), "shardgate.db"))
	}},
	{name: "postgres", open: func(b *testing.B) Store {
		url := storetest.PostgresURL(b) // skips, saying why, without a database
		// As many connections as a replica gets by default, not a test's few.
		return openPostgres(b, storetest.WithParams(b, url, map[string]string{"pool_max_conns": strconv.Itoa(DefaultPostgresConns)}))
	}},
}

// webhookPayload is a real pull_request delivery (28 KB).
func webhookPayload(b *testing.B) []byte {
	payload, err := os.ReadFile(filepath.Join("..", "testdata", "github", "webhooks", "pull_request", "opened.payload.json"))
	require.NoError(b, err)
	return payload
}

func BenchmarkEnqueueAt200PerSecond(b *testing.B)  { benchEnqueueAt(b, 200) }
func BenchmarkEnqueueAt1000PerSecond(b *testing.B) { benchEnqueueAt(b, 1000) }

// benchEnqueueAt measures durable enqueue latency at a fixed arrival rate,
// open loop as deliveries arrive (a slow enqueue does not slow the next
// arrival), through the limit check intake makes (a limit never reached, so
// none is refused) while two workers claim and complete jobs the way the
// dispatcher does. It reports p50/p99/max and the rate reached.
func benchEnqueueAt(b *testing.B, rate int) {
	for _, bs := range benchStores {
		b.Run(bs.name, func(b *testing.B) {
			ctx := context.Background()
			s := bs.open(b)
			payload := webhookPayload(b)
			stop := drain(b, s, 2)
			n := max(b.N, 3*rate) // at least three seconds of load
			latencies := make([]time.Duration, n)
			interval := time.Second / time.Duration(rate)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i := range n {
				time.Sleep(time.Until(start.Add(time.Duration(i) * interval))) // pacing the load, not a clock
				wg.Go(func() {
					t0 := time.Now()
					j := &Job{DeliveryID: fmt.Sprintf("bench-%d", i), Kind: "event", Event: "pull_request", Payload: payload}
					err := s.Enqueue(ctx, j, 1<<30)
					latencies[i] = time.Since(t0)
					if err != nil {
						b.Errorf("enqueue %d: %v", i, err)
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			stop()
			sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
			b.ReportMetric(float64(latencies[n/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(latencies[n*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(latencies[n-1].Microseconds())/1000, "max-ms")
			b.ReportMetric(float64(n)/elapsed.Seconds(), "enqueues/s")
		})
	}
}

// drain runs workers that claim and complete jobs until stop is called.
func drain(b *testing.B, s Store, workers int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			owner := fmt.Sprintf("drain-%d", w)
			for ctx.Err() == nil {
				j, err := s.Claim(ctx, owner)
				switch {
				case err != nil && ctx.Err() == nil:
					b.Errorf("claim: %v", err)
					return
				case j == nil:
					select {
					case <-ctx.Done():
					case <-time.After(time.Millisecond): // idle poll, as the dispatcher's
					}
				default:
					if err := s.Complete(context.WithoutCancel(ctx), j.ID, j.Owner, nil); err != nil {
						b.Errorf("complete: %v", err)
						return
					}
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// BenchmarkClaim measures how fast workers take jobs: b.N jobs queued up
// front, then four workers claim and complete each (two round trips or
// transactions a job), as the dispatcher does.
func BenchmarkClaim(b *testing.B) { benchClaim(b, nil) }

// BenchmarkClaimFair is BenchmarkClaim with scheduling identities: the jobs
// spread over 4 installations and 50 pull requests each, so every claim
// weighs installations and skips the pull requests that run a job.
func BenchmarkClaimFair(b *testing.B) {
	benchClaim(b, func(i int64, j *Job) {
		j.Installation = 1 + i%4
		j.Lane = fmt.Sprintf("o/r%d#%d", j.Installation, i%200)
	})
}

func benchClaim(b *testing.B, identify func(i int64, j *Job)) {
	for _, bs := range benchStores {
		b.Run(bs.name, func(b *testing.B) {
			ctx := context.Background()
			s := bs.open(b)
			payload := webhookPayload(b)
			fillWith(b, s, b.N, payload, identify)
			var claimed atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := range 4 {
				wg.Go(func() {
					for {
						j, err := s.Claim(ctx, fmt.Sprintf("w%d", w))
						if err != nil || j == nil {
							if err != nil {
								b.Errorf("claim: %v", err)
							}
							return
						}
						claimed.Add(1)
						if err := s.Complete(ctx, j.ID, j.Owner, nil); err != nil {
							b.Errorf("complete: %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if int(claimed.Load()) != b.N {
				b.Fatalf("claimed %d of %d jobs", claimed.Load(), b.N)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "claims/s")
		})
	}
}

// fill enqueues n jobs from parallel goroutines (untimed setup).
func fill(b *testing.B, s Store, n int, payload []byte) { fillWith(b, s, n, payload, nil) }

// fillWith is fill with each job's identity set by identify (nil: none).
func fillWith(b *testing.B, s Store, n int, payload []byte, identify func(i int64, j *Job)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				j := &Job{DeliveryID: fmt.Sprintf("fill-%d", i), Kind: "event", Payload: payload}
				if identify != nil {
					identify(i, j)
				}
				err := s.Enqueue(context.Background(), j, 0)
				if err != nil && !errors.Is(err, ErrDuplicate) {
					b.Errorf("enqueue: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkEnqueueParallel measures durable enqueue throughput from
// concurrent intake handlers, as fast as they go.
func BenchmarkEnqueueParallel(b *testing.B) {
	for _, bs := range benchStores {
		b.Run(bs.name, func(b *testing.B) {
			ctx := context.Background()
			s := bs.open(b)
			payload := make([]byte, 8<<10)
			var seq atomic.Int64
			b.SetBytes(int64(len(payload)))
			b.SetParallelism(8) // intake handlers wait on the commit, not on the CPU
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					j := &Job{DeliveryID: fmt.Sprintf("delivery-%d", seq.Add(1)), Kind: "event", Payload: payload}
					if err := s.Enqueue(ctx, j, 1<<30); err != nil {
						b.Errorf("enqueue: %v", err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "enqueues/s")
		})
	}
}
