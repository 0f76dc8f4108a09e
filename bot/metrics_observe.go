package bot

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/runner"
)

// The observer hooks below are what the rest of the bot calls; each is safe
// on a nil *metrics (a Server built by hand in a test) and returns at once.

func (m *metrics) observeDelivery(event, outcome string) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues(event, outcome).Inc()
}

func (m *metrics) observeJob(event string, err error, d time.Duration) {
	if m == nil {
		return
	}
	outcome := "done"
	if err != nil {
		outcome = "failed"
	}
	m.jobs.WithLabelValues(event, outcome).Observe(d.Seconds())
}

// instrumentWebhook times every webhook request by its status code (a
// bounded set the intake chooses; no header reaches a label).
func (m *metrics) instrumentWebhook(h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	return promhttp.InstrumentHandlerDuration(m.webhook, h)
}

// countRunning wraps the event handlers so that the running-jobs gauge counts
// the jobs in their Handle.
func (m *metrics) countRunning(hs []EventHandler) []EventHandler {
	if m == nil {
		return hs
	}
	out := make([]EventHandler, len(hs))
	for i, h := range hs {
		out[i] = runningHandler{EventHandler: h, running: m.jobsRunning}
	}
	return out
}

type runningHandler struct {
	EventHandler
	running prometheus.Gauge
}

func (h runningHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	h.running.Inc()
	defer h.running.Dec()
	return h.EventHandler.Handle(ctx, eventType, deliveryID, payload)
}

// timePlan starts timing one project's plan; the function it returns records
// it with rec's outcome. One deferred line at the top of planning:
//
//	defer s.metrics.timePlan(rec)()
func (m *metrics) timePlan(rec *PlanRecord) func() {
	if m == nil || rec == nil {
		return func() {}
	}
	start := time.Now()
	return func() {
		outcome := "planned"
		if rec.Error != "" {
			outcome = "error"
		}
		m.plans.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
	}
}

// observeApply records one apply job's outcome and its time from start.
func (m *metrics) observeApply(state ApplyState, d time.Duration) {
	if m == nil {
		return
	}
	outcome := string(state)
	if !slices.Contains(applyOutcomes, outcome) {
		outcome = otherLabel
	}
	m.applies.WithLabelValues(outcome).Observe(d.Seconds())
}

// observeTerraform records one terraform command (init, workspace, plan,
// show, apply); its signature fits a runner command observer.
func (m *metrics) observeTerraform(command string, d time.Duration, err error) {
	if m == nil {
		return
	}
	if !slices.Contains(terraformCommands, command) {
		command = otherLabel
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.terraform.WithLabelValues(command, outcome).Observe(d.Seconds())
}

// observeLockWaits records the state locks a job waited on (Job.LockWaits)
// once the job is done with terraform; phase is "plan" or "apply".
func (m *metrics) observeLockWaits(phase string, waits []runner.LockWaitRecord) {
	if m == nil {
		return
	}
	if !slices.Contains(lockPhases, phase) {
		phase = otherLabel
	}
	for _, w := range waits {
		m.lockWaits.WithLabelValues(phase).Inc()
		m.lockWaited.WithLabelValues(phase).Observe(w.WaitedSeconds)
	}
}

// observeDecision records one policy decision; phase is "review" (the pull
// request's plan) or "merge" (the merge commit's plan, before apply).
func (m *metrics) observeDecision(phase string, dec policy.Decision) {
	if m == nil {
		return
	}
	if !slices.Contains(decisionPhases, phase) {
		phase = otherLabel
	}
	result := "denied"
	if dec.Allowed {
		result = "allowed"
	}
	m.decisions.WithLabelValues(phase, result).Inc()
	seen := map[string]bool{}
	for _, v := range dec.Violations {
		rule := v.Rule
		if !m.rules[rule] {
			rule = otherLabel
		}
		if !seen[rule] {
			seen[rule] = true
			m.violations.WithLabelValues(phase, rule).Inc()
		}
	}
}

// observeConvergence records the wait for one stream after apply: err is what
// WaitConverged returned, d the time since terraform apply ended.
func (m *metrics) observeConvergence(err error, d time.Duration) {
	if m == nil {
		return
	}
	var regressed *coord.MetadataRegressedError
	outcome := "error"
	switch {
	case err == nil:
		outcome = "converged"
	case errors.As(err, &regressed):
		outcome = "regressed"
	case errors.Is(err, context.DeadlineExceeded):
		outcome = "timeout"
	case errors.Is(err, context.Canceled):
		outcome = "interrupted"
	}
	m.convergence.WithLabelValues(outcome).Observe(d.Seconds())
}
