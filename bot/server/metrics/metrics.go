// Package metrics is shardgate's Prometheus registry: every metric the
// service exposes, created with its bounded label values at start, and the
// observer functions the rest of the service calls. Every metric is
// documented in docs/metrics.md (TestMetricsAreDocumented checks both ways).
package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/shardgate/shardgate/internal/phases"

	"github.com/shardgate/shardgate/policy"
)

// Label values are bounded sets chosen here: nothing a pull
// request, a plan or an unsigned request controls becomes a label value.

// Label values the metrics are created with at start, so that every series
// exists (at zero) before the first request and rate() works from the start.
var (
	deliveryOutcomes   = []string{"queued", "duplicate", "rejected", "ignored"}
	jobOutcomes        = []string{"done", "failed"}
	planOutcomes       = []string{"planned", "error"}
	applyOutcomes      = []string{"applied", "failed"}
	terraformCommands  = []string{"init", "workspace", "plan", "show", "apply"}
	commandOutcomes    = []string{"ok", "error"}
	lockPhases         = []string{"plan", "apply"}
	decisionPhases     = []string{"review", "merge"}
	decisionResults    = []string{"allowed", "denied"}
	convergenceResults = []string{"converged", "timeout", "regressed", "interrupted", "error"}
)

// ApplyStates are the states of an apply job, in order: the state label
// values of shardgate_apply_jobs and, the last two, the outcomes of
// shardgate_apply_duration_seconds. The bot's ApplyState values are these
// (a test there checks it).
var ApplyStates = []string{"queued", "preflight", "planning", "applying", "converging", "applied", "failed"}

// otherLabel stands for any value outside a label's bounded set.
const otherLabel = "other"

// Metrics holds shardgate's collectors. Every method is safe on a nil
// *Metrics (a server built by hand in a test) and returns at once.
type Metrics struct {
	// collectors are the collectors registered, for the documentation test.
	collectors []prometheus.Collector

	deliveries  *prometheus.CounterVec
	webhook     *prometheus.HistogramVec
	jobs        *prometheus.HistogramVec
	jobsRunning prometheus.Gauge
	plans       *prometheus.HistogramVec
	applies     *prometheus.HistogramVec
	terraform   *prometheus.HistogramVec
	lockWaits   *prometheus.CounterVec
	lockWaited  *prometheus.HistogramVec
	decisions   *prometheus.CounterVec
	violations  *prometheus.CounterVec
	convergence *prometheus.HistogramVec
	coordCalls  *prometheus.CounterVec
	driftChecks *prometheus.CounterVec
	jobFailures *prometheus.CounterVec
	planPhases  *prometheus.HistogramVec
	// notifyAttempts: notify.go.
	notifyAttempts *prometheus.CounterVec

	// rules are the rule ids a violation may be counted under.
	rules map[string]bool
	// events are the X-GitHub-Event values counted under their name
	// (SetEvents); any other counts as "other".
	events map[string]bool
}

// Sources are the state the store-derived metrics read at each scrape; a nil
// function, or one that fails, reports NaN (unknown).
type Sources struct {
	// Queued counts the webhook jobs waiting for a worker.
	Queued func() (int, error)
	// ApplyJobs counts the apply jobs in the store by state.
	ApplyJobs func() (map[string]int, error)
	// Drift reads every project's last drift check.
	Drift func() ([]DriftProject, error)
	// GitHub reads the installations' rate-limit budgets.
	GitHub func() []GitHubBudget
	// Notifications counts the outbox's pending and failed deliveries.
	Notifications func() (pending, failed int, err error)
}

// New creates the collectors, registers them (and the Go, process and build
// collectors) on reg and creates the series of every bounded label value.
func New(reg prometheus.Registerer, src Sources) *Metrics {
	seconds := prometheus.ExponentialBuckets(0.05, 2, 14) // 50ms .. ~7min
	long := prometheus.ExponentialBuckets(1, 2, 13)       // 1s .. ~68min
	m := &Metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shardgate_webhook_deliveries_total", Help: "Webhook deliveries by event and outcome.",
		}, []string{"event", "outcome"}),
		webhook: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shardgate_webhook_duration_seconds", Help: "Time to answer a webhook request, by HTTP status code.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}, []string{"code"}),
		jobs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shardgate_job_duration_seconds", Help: "Time to run a queued job, by event and outcome.", Buckets: seconds,
		}, []string{"event", "outcome"}),
		jobsRunning: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "shardgate_webhook_jobs_running", Help: "Webhook jobs running in this process now.",
		}),
		plans: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shardgate_plan_duration_seconds", Help: "Time to plan one project of a pull request (init, plan, show, parse, live state), by outcome.",
			Buckets: seconds,
		}, []string{"outcome"}),
		applies: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shardgate_apply_duration_seconds", Help: "Time of one apply job from start to its outcome, convergence included.", Buckets: long,
		}, []string{"outcome"}),
		terraform: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shardgate_terraform_command_duration_seconds", Help: "Time of each terraform command run, by command and outcome.",
			Buckets: seconds,
		}, []string{"command", "outcome"}),
		lockWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shardgate_state_lock_waits_total", Help: "Terraform state locks held by someone else that a job waited on, by phase.",
		}, []string{"phase"}),
		lockWaited: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shardgate_state_lock_wait_seconds", Help: "Time a job waited on one state lock holder, by phase.", Buckets: long,
		}, []string{"phase"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shardgate_decisions_total", Help: "Policy decisions by phase (review, merge) and result (allowed, denied).",
		}, []string{"phase", "result"}),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shardgate_policy_violations_total", Help: "Denying decisions by phase and violated rule id (each rule once per decision).",
		}, []string{"phase", "rule"}),
		convergence: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shardgate_convergence_seconds", Help: "Time from the end of terraform apply until a scaled stream was complete and safe (or the wait ended), by outcome.",
			Buckets: long,
		}, []string{"outcome"}),
		coordCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shardgate_coordinator_requests_total", Help: "HTTP requests to coordinators (each attempt), by operation and status class.",
		}, []string{"operation", "status_class"}),
		driftChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shardgate_drift_checks_total", Help: "Drift checks of one project, by outcome (clean, drifted, error).",
		}, []string{"outcome"}),
		jobFailures:    newJobFailures(),
		planPhases:     newPlanPhases(),
		notifyAttempts: newNotificationAttempts(),
		rules:          map[string]bool{},
		events:         map[string]bool{"": true, "ping": true},
	}
	m.collectors = []prometheus.Collector{m.deliveries, m.webhook, m.jobs, m.jobFailures, m.jobsRunning, m.plans, m.applies,
		m.terraform, m.lockWaits, m.lockWaited, m.decisions, m.violations, m.convergence, m.coordCalls,
		newQueueDepth(src.Queued), newApplyJobsCollector(src.ApplyJobs), m.driftChecks, newDriftCollector(src.Drift),
		newGitHubCollector(src.GitHub), m.planPhases,
		m.notifyAttempts, newNotificationsCollector(src.Notifications)}
	reg.MustRegister(m.collectors...)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector())
	m.initSeries()
	return m
}

// initSeries creates the series of every bounded label value.
func (m *Metrics) initSeries() {
	m.webhook.WithLabelValues("202")
	for _, o := range planOutcomes {
		m.plans.WithLabelValues(o)
	}
	for _, o := range applyOutcomes {
		m.applies.WithLabelValues(o)
	}
	for _, c := range terraformCommands {
		for _, o := range commandOutcomes {
			m.terraform.WithLabelValues(c, o)
		}
	}
	for _, p := range lockPhases {
		m.lockWaits.WithLabelValues(p)
		m.lockWaited.WithLabelValues(p)
	}
	for _, p := range decisionPhases {
		for _, r := range decisionResults {
			m.decisions.WithLabelValues(p, r)
		}
	}
	for _, o := range convergenceResults {
		m.convergence.WithLabelValues(o)
	}
	for _, op := range coordOperationNames() {
		m.coordCalls.WithLabelValues(op, "2xx")
	}
	for _, o := range driftOutcomes {
		m.driftChecks.WithLabelValues(o)
	}
	for _, p := range phases.Names {
		m.planPhases.WithLabelValues(p)
	}
}

// SetEvents creates the delivery and job series of the handled events.
func (m *Metrics) SetEvents(events []string) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues("ping", "pong")
	for _, e := range events {
		m.events[e] = true
	}
	for _, e := range append(slices.Clone(events), otherLabel) {
		for _, o := range deliveryOutcomes {
			m.deliveries.WithLabelValues(e, o)
		}
		for _, o := range jobOutcomes {
			m.jobs.WithLabelValues(e, o)
		}
		m.jobFailureSeries(e)
	}
}

// eventLabel is event when its series exist (a handled event, ping, or ""
// for a request refused before its event counts), else "other": a signed
// delivery names any X-GitHub-Event it likes.
func (m *Metrics) eventLabel(event string) string {
	if m.events[event] {
		return event
	}
	return otherLabel
}

// SetRules lists the rule ids violations are counted under (others count as
// "other") and creates their series.
func (m *Metrics) SetRules(ids []string) {
	if m == nil {
		return
	}
	for _, id := range ids {
		m.rules[id] = true
		for _, p := range decisionPhases {
			m.violations.WithLabelValues(p, id)
		}
	}
}

// RuleIDs are the ids of rules, for SetRules.
func RuleIDs(rules []policy.RuleInfo) []string {
	ids := make([]string, 0, len(rules))
	for _, r := range rules {
		ids = append(ids, r.ID)
	}
	return ids
}
