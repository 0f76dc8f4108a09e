package metrics

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/metrics/metricstest"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/terraform/runner"
)

var (
	value     = metricstest.Value
	histCount = metricstest.HistCount
)

func readMetricsDoc(t *testing.T) map[string]metricstest.Documented {
	t.Helper()
	return metricstest.ReadDoc(t, "../../../docs/metrics.md")
}

var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

// registeredNames are the metric names the collectors describe: what is
// registered, whether or not it has a sample yet.
func registeredNames(t *testing.T, m *Metrics) []string {
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

func testMetrics(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := New(reg, Sources{
		Queued:    func() (int, error) { return 3, nil },
		ApplyJobs: func() (map[string]int, error) { return nil, nil },
		Drift: func() ([]DriftProject, error) {
			return []DriftProject{{Repo: "acme/infra", Project: "streams", Status: "drifted", Groups: 2, CheckedAt: time.Unix(1700000000, 0)}}, nil
		},
		GitHub: func() []GitHubBudget {
			return []GitHubBudget{{InstallationID: 42, Limit: 5000, Remaining: 17, Reset: time.Unix(1700003600, 0),
				SecondaryUntil: time.Unix(1700000060, 0), Paced: map[string]int64{"content": 4},
				PacedFor: map[string]time.Duration{"content": 90 * time.Second}}, {InstallationID: 43}}
		},
	})
	m.SetEvents([]string{"pull_request", "issue_comment"})
	m.SetRules([]string{"shard_delta"})
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
		require.Equal(t, want.Kind, strings.ToLower(f.GetType().String()), f.GetName())
		var labels []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		sort.Strings(labels)
		require.Equal(t, want.Labels, labels, f.GetName())
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

func TestMetricHooksKeepLabelsBounded(t *testing.T) {
	m, reg := testMetrics(t)
	m.ObserveDecision("review", policy.Decision{Allowed: true})
	m.ObserveDecision("review", policy.Decision{Violations: []policy.Violation{
		{Rule: "shard_delta"}, {Rule: "shard_delta"}, {Rule: "from-the-repo's-policy"}}})
	m.ObserveDecision("merge", policy.Decision{Violations: []policy.Violation{{Rule: "shard_delta"}}})
	require.Equal(t, 1.0, value(t, reg, "shardgate_decisions_total", "review", "allowed"))
	require.Equal(t, 1.0, value(t, reg, "shardgate_decisions_total", "review", "denied"))
	require.Equal(t, 1.0, value(t, reg, "shardgate_policy_violations_total", "review", "shard_delta"), "once per decision")
	require.Equal(t, 1.0, value(t, reg, "shardgate_policy_violations_total", "review", otherLabel), "unknown rule ids are not labels")
	require.Equal(t, 1.0, value(t, reg, "shardgate_policy_violations_total", "merge", "shard_delta"))

	m.ObserveTerraform("plan", time.Second, nil)
	m.ObserveTerraform("plan", time.Second, errors.New("exit 1"))
	m.ObserveTerraform("force-unlock", time.Second, nil)
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_terraform_command_duration_seconds", "plan", "ok"))
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_terraform_command_duration_seconds", "plan", "error"))
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_terraform_command_duration_seconds", otherLabel, "ok"))

	m.ObserveLockWaits("apply", []runner.LockWaitRecord{{WaitedSeconds: 3}, {WaitedSeconds: 40}})
	require.Equal(t, 2.0, value(t, reg, "shardgate_state_lock_waits_total", "apply"))
	require.EqualValues(t, 2, histCount(t, reg, "shardgate_state_lock_wait_seconds", "apply"))

	m.TimePlan(func() bool { return false })()
	failed := false
	done := m.TimePlan(func() bool { return failed })
	failed = true // the outcome is read when the plan ends
	done()
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_plan_duration_seconds", "planned"))
	require.EqualValues(t, 1, histCount(t, reg, "shardgate_plan_duration_seconds", "error"))

	m.ObserveApply("applied", time.Minute)
	m.ObserveApply("converging", time.Minute)
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
		m.ObserveConvergence(err, time.Minute)
		require.Equal(t, before+1, histCount(t, reg, "shardgate_convergence_seconds", outcome), "%v", err)
	}

	var nilMetrics *Metrics
	require.NotPanics(t, func() {
		nilMetrics.ObserveDecision("review", policy.Decision{})
		nilMetrics.ObserveConvergence(nil, 0)
		nilMetrics.ObserveLockWaits("plan", []runner.LockWaitRecord{{}})
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

// The running-jobs gauge counts the jobs started and not finished.
func TestRunningJobsGauge(t *testing.T) {
	m, reg := testMetrics(t)
	first, second := m.JobStarted(), m.JobStarted()
	require.Equal(t, 2.0, value(t, reg, "shardgate_webhook_jobs_running"))
	first()
	require.Equal(t, 1.0, value(t, reg, "shardgate_webhook_jobs_running"))
	second()
	require.Equal(t, 0.0, value(t, reg, "shardgate_webhook_jobs_running"))
	var nilMetrics *Metrics
	require.NotPanics(t, func() { nilMetrics.JobStarted()() })
}

func TestDriftMetrics(t *testing.T) {
	m, reg := testMetrics(t)
	m.ObserveDriftCheck("drifted")
	m.ObserveDriftCheck("whatever a caller passes")
	require.Equal(t, 1.0, value(t, reg, "shardgate_drift_checks_total", "drifted"))
	require.Equal(t, 1.0, value(t, reg, "shardgate_drift_checks_total", otherLabel))
	require.Equal(t, 2.0, value(t, reg, "shardgate_drift_groups", "streams", "acme/infra"))
	require.Equal(t, 1700000000.0, value(t, reg, "shardgate_drift_last_check_timestamp_seconds", "streams", "acme/infra"))
	require.Equal(t, 1.0, value(t, reg, "shardgate_drift_projects", "drifted"))
	require.Equal(t, 0.0, value(t, reg, "shardgate_drift_projects", "clean"))

	many := make([]DriftProject, maxDriftProjects+10)
	for i := range many {
		many[i] = DriftProject{Repo: "acme/infra", Project: fmt.Sprint("p", i, strings.Repeat("x", 200)), Status: "clean"}
	}
	reg2 := prometheus.NewRegistry()
	New(reg2, Sources{Drift: func() ([]DriftProject, error) { return many, nil }})
	families, err := reg2.Gather()
	require.NoError(t, err)
	for _, f := range families {
		switch f.GetName() {
		case "shardgate_drift_groups":
			require.Len(t, f.GetMetric(), maxDriftProjects, "per-project series are bounded")
			for _, mt := range f.GetMetric() {
				for _, l := range mt.GetLabel() {
					require.LessOrEqual(t, len([]rune(l.GetValue())), maxLabelRunes+1)
				}
			}
		case "shardgate_drift_projects":
			for _, mt := range f.GetMetric() {
				if mt.GetLabel()[0].GetValue() == "clean" {
					require.Equal(t, float64(len(many)), mt.GetGauge().GetValue())
				}
			}
		}
	}
}

func TestGitHubBudgetMetrics(t *testing.T) {
	_, reg := testMetrics(t)
	require.Equal(t, 5000.0, value(t, reg, "shardgate_github_rate_limit_limit", "42"))
	require.Equal(t, 17.0, value(t, reg, "shardgate_github_rate_limit_remaining", "42"))
	require.Equal(t, 1700003600.0, value(t, reg, "shardgate_github_rate_limit_reset_timestamp_seconds", "42"))
	require.Equal(t, 1700000060.0, value(t, reg, "shardgate_github_secondary_limit_until_timestamp_seconds", "42"))
	require.Equal(t, 0.0, value(t, reg, "shardgate_github_secondary_limit_until_timestamp_seconds", "43"))
	require.Equal(t, 4.0, value(t, reg, "shardgate_github_paced_requests_total", "42", "content"))
	require.Equal(t, 90.0, value(t, reg, "shardgate_github_paced_wait_seconds_total", "42", "content"))
	require.Equal(t, 0.0, value(t, reg, "shardgate_github_paced_requests_total", "42", "concurrency"))
	require.Equal(t, 0.0, value(t, reg, "shardgate_github_paced_requests_total", "43", "content"))
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == "shardgate_github_rate_limit_remaining" {
			require.Len(t, f.GetMetric(), 1, "an installation GitHub gave no budget for has no budget series")
		}
	}
}
