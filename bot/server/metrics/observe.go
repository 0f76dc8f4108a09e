package metrics

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/terraform/runner"
)

// The observer hooks below are what the rest of the service calls; each is
// safe on a nil *Metrics (a Server built by hand in a test) and returns at once.

// ObserveDelivery counts one webhook delivery by event and outcome.
func (m *Metrics) ObserveDelivery(event, outcome string) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues(m.eventLabel(event), outcome).Inc()
}

// ObserveJob records one webhook job's run; its signature fits the
// dispatcher's observer.
func (m *Metrics) ObserveJob(event string, err error, d time.Duration) {
	if m == nil {
		return
	}
	outcome := "done"
	if err != nil {
		outcome = "failed"
	}
	m.jobs.WithLabelValues(m.eventLabel(event), outcome).Observe(d.Seconds())
}

// InstrumentWebhook times every webhook request by its status code (a
// bounded set the intake chooses; no header reaches a label).
func (m *Metrics) InstrumentWebhook(h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	return promhttp.InstrumentHandlerDuration(m.webhook, h)
}

// JobStarted counts one more webhook job running in this process; the
// function it returns counts it finished.
func (m *Metrics) JobStarted() (finished func()) {
	if m == nil {
		return func() {}
	}
	m.jobsRunning.Inc()
	return m.jobsRunning.Dec
}

// TimePlan starts timing one project's plan; the function it returns records
// it, with the outcome failed says when called (the plan's outcome is known
// only when it ends). One deferred line at the top of planning:
//
//	defer s.metrics.TimePlan(func() bool { return rec.Error != "" })()
func (m *Metrics) TimePlan(failed func() bool) func() {
	if m == nil || failed == nil {
		return func() {}
	}
	start := time.Now()
	return func() {
		outcome := "planned"
		if failed() {
			outcome = "error"
		}
		m.plans.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
	}
}

// ObserveApply records one apply job's outcome (its final state) and its
// time from start.
func (m *Metrics) ObserveApply(state string, d time.Duration) {
	if m == nil {
		return
	}
	outcome := state
	if !slices.Contains(applyOutcomes, outcome) {
		outcome = otherLabel
	}
	m.applies.WithLabelValues(outcome).Observe(d.Seconds())
}

// ObserveTerraform records one terraform command (init, workspace, plan,
// show, apply); its signature fits a runner command observer.
func (m *Metrics) ObserveTerraform(command string, d time.Duration, err error) {
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

// ObserveLockWaits records the state locks a job waited on (Job.LockWaits)
// once the job is done with terraform; phase is "plan" or "apply".
func (m *Metrics) ObserveLockWaits(phase string, waits []runner.LockWaitRecord) {
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

// ObserveDecision records one policy decision; phase is "review" (the pull
// request's plan) or "merge" (the merge commit's plan, before apply).
func (m *Metrics) ObserveDecision(phase string, dec policy.Decision) {
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

// ObserveConvergence records the wait for one stream after apply: err is what
// WaitConverged returned, d the time since terraform apply ended.
func (m *Metrics) ObserveConvergence(err error, d time.Duration) {
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
