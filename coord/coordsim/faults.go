package coordsim

import (
	"time"
)

// faults are armed by tests (or tooling) at run time; s.mu guards them.
type faults struct {
	provisioningFail map[[2]string]bool
	rateLimitLeft    int
	retryAfter       time.Duration
	failLeft         int
	failStatus       int
	failCode         string
	stuckDraining    map[string]bool
	terminating      bool
	delay            time.Duration
}

// FailNextProvisioning makes the next scale of prefix/group answer 503
// REDIS_STREAM_PROVISIONING_FAILED and leave its migration PREPARING.
func (s *Sim) FailNextProvisioning(prefix, groupName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.provisioningFail == nil {
		s.faults.provisioningFail = map[[2]string]bool{}
	}
	s.faults.provisioningFail[[2]string{prefix, groupName}] = true
}

// RateLimitNext answers the next n mutations with 429 RATE_LIMIT_EXCEEDED and
// Retry-After (whole seconds, at least 1).
func (s *Sim) RateLimitNext(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.rateLimitLeft, s.faults.retryAfter = n, retryAfter
}

// FailNext answers the next n authenticated requests (reads too) with status and
// errorCode, e.g. 503 COORDINATOR_STATE_MUTEX_UNAVAILABLE or 409 STATE_VERSION_CONFLICT.
func (s *Sim) FailNext(n, status int, errorCode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failLeft, s.faults.failStatus, s.faults.failCode = n, status, errorCode
}

// SetDrainingStuck keeps (or releases) every DRAINING migration of prefix in
// DRAINING, as a removed shard with pending entries or unknown lag does.
func (s *Sim) SetDrainingStuck(prefix string, stuck bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.stuckDraining == nil {
		s.faults.stuckDraining = map[string]bool{}
	}
	s.faults.stuckDraining[prefix] = stuck
}

// SetTerminating makes every mutation answer 503 COORDINATOR_TERMINATING.
func (s *Sim) SetTerminating(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.terminating = on
}

// SetDelay delays every response by d (0 turns it off).
func (s *Sim) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.delay = d
}

// SetReconcileStalled stops (or restarts) the group's reconcile: counters move
// on but the target assignment and assignmentEpoch stay behind, so
// assignments.invariantViolations lists the mismatch and any readable shard
// without a target owner. It reports false when the group does not exist.
func (s *Sim) SetReconcileStalled(prefix, groupName string, stalled bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[[2]string{prefix, groupName}]
	if g == nil {
		return false
	}
	g.stalled = stalled
	return true
}
