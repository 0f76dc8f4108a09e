package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/runner"
)

// documentedMetric is one row of docs/metrics.md's table.
type documentedMetric struct {
	kind   string
	labels []string
}

var docRow = regexp.MustCompile("^\\| `(shardgate_[a-z_]+)` \\| ([a-z]+) \\|([^|]*)\\|")

func readMetricsDoc(t *testing.T) map[string]documentedMetric {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "metrics.md"))
	require.NoError(t, err)
	out := map[string]documentedMetric{}
	for _, line := range strings.Split(string(b), "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var labels []string
		for _, l := range strings.Split(m[3], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
				labels = append(labels, l)
			}
		}
		sort.Strings(labels)
		require.NotContains(t, out, m[1], "documented twice")
		out[m[1]] = documentedMetric{kind: m[2], labels: labels}
	}
	require.NotEmpty(t, out, "no metric rows found in docs/metrics.md")
	return out
}

var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

// registeredNames are the metric names the collectors describe: what is
// registered, whether or not it has a sample yet.
func registeredNames(t *testing.T, m *metrics) []string {
	t.Helper()
	var names []string
	for _, c := range m.collectors {
		ch := make(chan *prometheus.Desc, 16)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			n := descName.FindStringSubmatch(d.String())
			require.NotNil(t, n, "cannot read the name of %s", d)
			names = append(names, n[1])
		}
	}
	sort.Strings(names)
	return names
}

func testMetrics(t *testing.T) (*metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := newMetrics(reg, metricSources{
		queued:    func() (int, error) { return 3, nil },
		applyJobs: func() ([]*ApplyJob, error) { return nil, nil },
	})
	m.setEvents([]string{"pull_request", "issue_comment"})
	m.setRules([]string{"shard_delta"})
	return m, reg
}

func TestMetricsAreDocumented(t *testing.T) {
	doc := readMetricsDoc(t)
	m, reg := testMetrics(t)
	registered := registeredNames(t, m)
	var documented []string
	for n := range doc {
		documented = append(documented, n)
	}
	sort.Strings(documented)
	require.Equal(t, documented, registered, "docs/metrics.md and the registry list other metrics")

	// At start, before any observation: every metric is there, with the type
	// and labels the doc gives.
	families, err := reg.Gather()
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "shardgate_") {
			continue
		}
		seen[f.GetName()] = true
		want, ok := doc[f.GetName()]
		require.True(t, ok, "%s is exposed but not documented", f.GetName())
		require.Equal(t, want.kind, strings.ToLower(f.GetType().String()), f.GetName())
		var labels []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		sort.Strings(labels)
		require.Equal(t, want.labels, labels, f.GetName())
	}
	for _, n := range documented {
		require.True(t, seen[n], "%s has no series at start: create its series in initSeries", n)
	}
	problems, err := promlint.NewWithMetricFamilies(families).Lint()
	require.NoError(t, err)
	var ours []string
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "shardgate_") {
			ours = append(ours, p.Metric+": "+p.Text)
		}
	}
	require.Empty(t, ours, "Prometheus naming conventions")
}

// The server's /metrics answers in full before the first request.
func TestMetricsBeforeTheFirstRequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shardgate.db")
	srv := newOpsServer(t, openTestBolt(t, path), path, AdminConfig{})
	web := httptest.NewServer(srv.Handler())
	t.Cleanup(web.Close)
	resp, err := http.Get(web.URL + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	for name := range readMetricsDoc(t) {
		require.Contains(t, string(body), "\n"+name, name)
	}
	require.Contains(t, string(body), "shardgate_queue_depth 0")
	require.Contains(t, string(body), `shardgate_apply_jobs{state="queued"} 0`)
	require.Contains(t, string(body), `shardgate_policy_violations_total{phase="review",rule="shard_delta"} 0`,
		"the built-in rules' series exist at start")
	require.Contains(t, string(body), `shardgate_webhook_deliveries_total{event="pull_request",outcome="queued"} 0`)
	require.Contains(t, string(body), "go_goroutines")
}

// sample is one series as gathered: a counter's or gauge's value, a
// histogram's sample count.
type sample struct {
	value float64
	count uint64
}

// series gathers the series of name whose label values are values, in
// label-name order; the zero sample when there is none.
func series(t *testing.T, reg *prometheus.Registry, name string, values ...string) sample {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var got []string
			for _, l := range m.GetLabel() {
				got = append(got, l.GetValue())
			}
			if strings.Join(got, "|") == strings.Join(values, "|") {
				return sample{value: m.GetCounter().GetValue() + m.GetGauge().GetValue(), count: m.GetHistogram().GetSampleCount()}
			}
		}
	}
	return sample{}
}

func histCount(t *testing.T, reg *prometheus.Registry, name string, values ...string) uint64 {
	t.Helper()
	return series(t, reg, name, values...).count
}

func value(t *testing.T, reg *prometheus.Registry, name string, values ...string) float64 {
	t.Helper()
	return series(t, reg, name, values...).value
}

func TestMetricHooksKeepLabelsBounded(t *testing.T) {
	m, reg := testMetrics(t)
	m.observeDecision("review", policy.Decision{Allowed: true})
	m.observeDecision("review", policy.Decision{Violations: []policy.Violation{
		{Rule: "shard_delta"}, {Rule: "shard_delta"}, {Rule: "from-the-repo's-policy"}}})
	m.observeDecision("merge", policy.Decision{Violations: []policy.Violation{{Rule: "shard_delta"}}})
	require.Equal(t, 1.0, value(t, reg, "shardgate_decisions_total", "review", "allowed"))
	require.Equal(t, 1.0, value(t, reg, "shardgate_decisions_total", "review", "denied"))
	require.Equal(t, 1.0, value(t, reg, "shardgate_policy_violations_total", "review", "shard_delta"), "once per decision")
	require.Equal(t, 1.0, value(t, reg, "shardgate_policy_violations_total", "review", otherLabel), "unknown rule ids are not labels")
	require.Equal(t, 1.0, value(t, reg, "shardgate_policy_violations_total", "merge", "shard_delta"))

	m.observeTerraform("plan", time.Second, nil)
	m.observeTerraform("plan", time.Second, errors.New("exit 1"))
	m.observeTerraform("force-unlock", time.Second, nil)
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_terraform_command_duration_seconds", "plan", "ok"))
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_terraform_command_duration_seconds", "plan", "error"))
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_terraform_command_duration_seconds", otherLabel, "ok"))

	m.observeLockWaits("apply", []runner.LockWaitRecord{{WaitedSeconds: 3}, {WaitedSeconds: 40}})
	require.Equal(t, 2.0, value(t, reg, "shardgate_state_lock_waits_total", "apply"))
	require.EqualValues(t, 2, histCount(t, reg, "shardgate_state_lock_wait_seconds", "apply"))

	m.timePlan(&PlanRecord{})()
	failed := &PlanRecord{}
	done := m.timePlan(failed)
	failed.Error = "terraform init failed" // the outcome is read when the plan ends
	done()
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_plan_duration_seconds", "planned"))
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_plan_duration_seconds", "error"))

	m.observeApply(ApplyApplied, time.Minute)
	m.observeApply(ApplyConverging, time.Minute)
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_apply_duration_seconds", "applied"))
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_apply_duration_seconds", otherLabel))

	for err, outcome := range map[error]string{
		nil: "converged",
		&coord.NotConvergedError{Err: context.DeadlineExceeded}:              "timeout",
		&coord.NotConvergedError{Err: context.Canceled}:                      "interrupted",
		fmt.Errorf("wait: %w", &coord.MetadataRegressedError{}):              "regressed",
		errors.New("poll convergence of x: coordinator GET /streams/x: 500"): "error",
	} {
		before := histCount(t, reg, "shardgate_convergence_seconds", outcome)
		m.observeConvergence(err, time.Minute)
		require.Equal(t, before+1, histCount(t, reg, "shardgate_convergence_seconds", outcome), "%v", err)
	}

	var nilMetrics *metrics
	require.NotPanics(t, func() {
		nilMetrics.observeDecision("review", policy.Decision{})
		nilMetrics.observeConvergence(nil, 0)
		nilMetrics.observeLockWaits("plan", []runner.LockWaitRecord{{}})
	}, "a Server built by hand has no metrics")
}

func TestCoordOperation(t *testing.T) {
	for _, tt := range []struct{ method, path, want string }{
		{"GET", "/coord/v1/monitoring/health", "health"},
		{"POST", "/coord/v1/auth/login", "login"},
		{"POST", "/coord/v1/streams/create-order/scale", "scale_stream"},
		{"POST", "/coord/v1/streams/create-order/groups/billing/scale", "scale_group"},
		{"GET", "/prefix/coord/v1/streams/p/groups/g", "get_group"},
		{"DELETE", "/coord/v1/streams/p/groups/g", "delete_group"},
		{"GET", "/coord/v1/monitoring/streams/p/groups/g/members", "members"},
		{"POST", "/coord/v1/streams/p/groups/g/migrations/m-1/rollback", "rollback"},
		// Names that look like path words stay names.
		{"POST", "/coord/v1/streams/scale/scale", "scale_stream"},
		{"GET", "/coord/v1/streams/groups/groups/groups", "get_group"},
		{"POST", "/coord/v1/streams/a%2Fb%2Fscale/scale", "scale_stream"},
		{"GET", "/coord/v1/streams/p/groups/g/evil", otherLabel},
		{"GET", "/elsewhere", otherLabel},
	} {
		require.Equal(t, tt.want, coordOperation(tt.method, tt.path), "%s %s", tt.method, tt.path)
	}
}

// The server's coordinator clients count their requests.
func TestCoordinatorRequestsAreCounted(t *testing.T) {
	sim := httptest.NewServer(coordsim.New())
	t.Cleanup(sim.Close)
	path := filepath.Join(t.TempDir(), "shardgate.db")
	srv := newOpsServer(t, openTestBolt(t, path), path, AdminConfig{})
	srv.cfg.Coordinators = []CoordinatorCredentials{{URLPrefix: sim.URL, Username: "admin", Password: NewSecret("password")}}
	c, err := srv.coordClient(sim.URL)
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

// blockingHandler holds its job until released.
type blockingHandler struct{ started, release chan struct{} }

func (blockingHandler) Handles() []string { return []string{"pull_request"} }
func (h blockingHandler) Handle(context.Context, string, string, []byte) error {
	close(h.started)
	<-h.release
	return nil
}

func TestRunningJobsGauge(t *testing.T) {
	m, reg := testMetrics(t)
	h := blockingHandler{started: make(chan struct{}), release: make(chan struct{})}
	wrapped := m.countRunning([]EventHandler{h})
	require.Equal(t, []string{"pull_request"}, wrapped[0].Handles())
	done := make(chan error)
	go func() { done <- wrapped[0].Handle(context.Background(), "pull_request", "d", nil) }()
	<-h.started
	require.Equal(t, 1.0, value(t, reg, "shardgate_webhook_jobs_running"))
	close(h.release)
	require.NoError(t, <-done)
	require.Equal(t, 0.0, value(t, reg, "shardgate_webhook_jobs_running"))
}

func TestStoreMetricsAtScrape(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	st := openTestBolt(t, path)
	srv := newOpsServer(t, st, path, AdminConfig{})
	for _, p := range []string{"a", "b"} {
		require.NoError(t, srv.applies.Enqueue(ctx, &ApplyJob{Ref: PRRef{Owner: owner, Repo: repoName, Number: 1},
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

// gauge gathers reg and returns the gauge name (with state when given).
func gauge(t *testing.T, reg *prometheus.Registry, name, state string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if state == "" || len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == state {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no %s{state=%q}", name, state)
	return 0
}
