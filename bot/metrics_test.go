package bot

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/server/metrics"
	"github.com/shardgate/shardgate/bot/server/metrics/metricstest"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/storeopen"
)

var (
	value     = metricstest.Value
	histCount = metricstest.HistCount
	gauge     = metricstest.Gauge
)

func readMetricsDoc(t *testing.T) map[string]metricstest.Documented {
	t.Helper()
	return metricstest.ReadDoc(t, "../docs/metrics.md")
}

// The apply job states are the metrics' state label values, in order.
func TestApplyStatesAreTheMetricsStates(t *testing.T) {
	states := []applyqueue.State{applyqueue.Queued, applyqueue.Preflight, applyqueue.Planning, applyqueue.Applying, applyqueue.Converging, applyqueue.Applied, applyqueue.Failed}
	var names []string
	for _, s := range states {
		names = append(names, string(s))
	}
	require.Equal(t, metrics.ApplyStates, names)
}

// The server's /metrics answers in full before the first request.
func TestMetricsBeforeTheFirstRequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shardgate.db")
	st := storeopen.Bolt(t, path)
	// The per-project drift gauges have a series per project checked (by an
	// earlier process, here): one is in the store.
	require.NoError(t, drift.NewStore(st).Put(context.Background(), &drift.Record{Repo: "acme/infra", Project: "streams", Status: drift.StatusClean}))
	srv := newOpsServer(t, st, path, serverconfig.AdminConfig{})
	web := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(web.Close)
	resp, err := http.Get(web.URL + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	for name := range readMetricsDoc(t) {
		if strings.HasPrefix(name, "shardgate_github_") {
			continue // per installation, once GitHub answered it (TestACommentStormWaitsForGitHubsPrimaryLimitAndLosesNoJob)
		}
		require.Contains(t, string(body), "\n"+name, name)
	}
	require.Contains(t, string(body), "shardgate_queue_depth 0")
	require.Contains(t, string(body), `shardgate_apply_jobs{state="queued"} 0`)
	require.Contains(t, string(body), `shardgate_policy_violations_total{phase="review",rule="shard_delta"} 0`,
		"the built-in rules' series exist at start")
	require.Contains(t, string(body), `shardgate_webhook_deliveries_total{event="pull_request",outcome="queued"} 0`)
	require.Contains(t, string(body), "go_goroutines")
}

// The server's coordinator clients count their requests.
func TestCoordinatorRequestsAreCounted(t *testing.T) {
	sim := httptest.NewServer(coordsim.New())
	t.Cleanup(sim.Close)
	path := filepath.Join(t.TempDir(), "shardgate.db")
	srv := newOpsServer(t, storeopen.Bolt(t, path), path, serverconfig.AdminConfig{})
	srv.cfg.Coordinators = []serverconfig.CoordinatorCredentials{{URLPrefix: sim.URL, Username: "admin", Password: serverconfig.NewSecret("password")}}
	c, err := srv.coords.Client(sim.URL)
	require.NoError(t, err)
	_, err = c.Health(context.Background())
	require.NoError(t, err)
	_, err = c.Group(context.Background(), "no-such-stream", "g")
	require.Error(t, err)
	require.Equal(t, 1.0, value(t, srv.registry, "shardgate_coordinator_requests_total", "health", "2xx"))
	require.Equal(t, 1.0, value(t, srv.registry, "shardgate_coordinator_requests_total", "get_group", "4xx"))

	sim.Close()
	_, err = c.Health(context.Background())
	require.Error(t, err)
	require.GreaterOrEqual(t, value(t, srv.registry, "shardgate_coordinator_requests_total", "health", "error"), 1.0)
}

func TestStoreMetricsAtScrape(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	st := storeopen.Bolt(t, path)
	srv := newOpsServer(t, st, path, serverconfig.AdminConfig{})
	for _, p := range []string{"a", "b"} {
		require.NoError(t, srv.applies.Enqueue(ctx, &applyqueue.Job{Ref: pullreq.Ref{Owner: owner, Repo: repoName, Number: 1},
			Project: p, Streams: []string{"http://coord|s-" + p}, MergeSHA: "abc"}))
	}
	web := httptest.NewServer(srv.Handler())
	t.Cleanup(web.Close)
	resp, err := http.Post(web.URL+"/webhook", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.EqualValues(t, 1, histCount(t, srv.registry, "shardgate_webhook_duration_seconds", "401"), "the webhook latency is observed by status")

	require.Equal(t, 2.0, gauge(t, srv.registry, "shardgate_apply_jobs", "queued"))
	require.Equal(t, 0.0, gauge(t, srv.registry, "shardgate_queue_depth", ""))

	require.NoError(t, st.Close())
	require.True(t, math.IsNaN(gauge(t, srv.registry, "shardgate_queue_depth", "")), "an unreadable store is unknown, not zero")
	require.True(t, math.IsNaN(gauge(t, srv.registry, "shardgate_apply_jobs", "queued")))
}
