package bot

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store"
)

// BenchmarkIntakeAt200PerSecond measures webhook acknowledgement latency on
// loopback at GitHub-like load: 200 deliveries/s of a real pull_request payload,
// each signature-checked and durably enqueued (fsync) before the 202. It
// reports p50/p99 latency and the achieved rate.
func BenchmarkIntakeAt200PerSecond(b *testing.B) {
	payload, err := os.ReadFile(filepath.Join("..", "testdata", "github", "webhooks", "pull_request", "opened.payload.json"))
	require.NoError(b, err)
	st, err := store.OpenBolt(filepath.Join(b.TempDir(), "bench.db"))
	require.NoError(b, err)
	defer st.Close()
	in := newTestIntake(b, st, 1<<30)
	srv := httptest.NewServer(in)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	sig := sign(testSecret, payload)

	const rate = 200
	n := max(b.N, 400)
	latencies := make([]time.Duration, n)
	var wg sync.WaitGroup
	interval := time.Second / rate
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < n; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(payload))
			req.Header.Set("X-GitHub-Event", "pull_request")
			req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%d", i))
			req.Header.Set("X-Hub-Signature-256", sig)
			t0 := time.Now()
			resp, err := client.Do(req)
			latencies[i] = time.Since(t0)
			if err != nil || resp.StatusCode != http.StatusAccepted {
				b.Errorf("delivery %d: %v %v", i, err, resp)
				return
			}
			resp.Body.Close()
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	b.ReportMetric(float64(latencies[n/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[n*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "deliveries/s")
}
