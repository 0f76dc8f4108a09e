package applyqueue

import (
	"sync"
	"testing"
	"time"
)

// passWatch records how the scheduler's passes ended, so that a test can
// wait for a pass that began after some change and read what it did,
// instead of watching the clock for something not to happen.
type passWatch struct {
	mu      sync.Mutex
	reports []passReport
	more    chan struct{} // closed and replaced at each report
}

// watchPasses returns a watch and the option that installs it.
func watchPasses() (*passWatch, SchedulerOption) {
	w := &passWatch{more: make(chan struct{})}
	return w, func(s *Scheduler) {
		s.onPass = func(r passReport) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.reports = append(w.reports, r)
			close(w.more)
			w.more = make(chan struct{})
		}
	}
}

// await wakes s and waits until done accepts the reports of the passes
// that began after the call; it returns every report so far.
func (w *passWatch) await(t *testing.T, s *Scheduler, what string, done func(after []passReport) bool) []passReport {
	t.Helper()
	from := s.passes.Load()
	s.Notify()
	timeout := time.After(applyWait)
	for {
		w.mu.Lock()
		all, more := append([]passReport(nil), w.reports...), w.more
		w.mu.Unlock()
		var after []passReport
		for _, r := range all {
			if r.n > from {
				after = append(after, r)
			}
		}
		if len(after) > 0 && done(after) {
			return all
		}
		select {
		case <-more:
		case <-timeout:
			t.Fatalf("the scheduler never %s", what)
		}
	}
}

// started returns the jobs every pass so far started, in order, through a
// whole pass that began after the call: what the scheduler would start now
// is in it.
func (w *passWatch) started(t *testing.T, s *Scheduler) []string {
	t.Helper()
	return seqsStarted(w.await(t, s, "made a pass", func([]passReport) bool { return true }))
}

// idle waits until a pass that began after the call ends with none of this
// process's jobs running, and returns the jobs every pass so far started:
// nothing runs or will run that is not in it, until something changes.
func (w *passWatch) idle(t *testing.T, s *Scheduler) []string {
	t.Helper()
	return seqsStarted(w.await(t, s, "went idle", func(after []passReport) bool {
		last := after[len(after)-1]
		return last.running == 0 && len(last.started) == 0
	}))
}

func seqsStarted(reports []passReport) []string {
	out := []string{}
	for _, r := range reports {
		out = append(out, r.started...)
	}
	return out
}
