package bot

import (
	"fmt"
	"net/http"
	"time"

	"github.com/shardgate/shardgate/bot/server/listener"
	"github.com/shardgate/shardgate/bot/server/livelog"
	"github.com/shardgate/shardgate/bot/statuspage"
)

// WithDriftSource shows another source of drift on the status page in place
// of the drift checks' records (tests).
func WithDriftSource(d statuspage.DriftSource) Option { return func(s *Server) { s.driftSource = d } }

// wireLiveLogs keeps the terraform output of the jobs this process runs
// for the status page, when it is served: the planner's and the applier's
// terraform jobs write to it.
func (s *Server) wireLiveLogs() {
	if !s.cfg.Status.Enabled() {
		return
	}
	s.liveLogs = livelog.NewHub(0, 0, s.redact, s.now)
}

// StatusHandler is the status page (status.listen).
func (s *Server) StatusHandler() http.Handler {
	logs, driftSource := s.liveLogs, s.driftSource
	if driftSource == nil {
		driftSource = statuspage.DriftRecords(s.drift.store, statuspage.WebURL(s.cfg.GitHubAPIURL))
	}
	if logs == nil {
		logs = livelog.NewHub(1, 1, s.redact, s.now)
	}
	return statuspage.New(statuspage.Options{Queue: s.applies, History: s.rec, Drift: driftSource, Logs: logs,
		Failures: failures{store: s.store, reach: s.reach, now: s.now}, Notifications: s.statusNotifications(),
		Redactor: s.redact, Token: s.cfg.Status.Token.Reveal(), SignIn: s.statusSignIn(), GitHubURL: statuspage.WebURL(s.cfg.GitHubAPIURL),
		Replica: s.applies.Owner(), Now: s.now, Log: s.log, GitHub: s.statusBudgets,
		Enforcement: s.enforcementLines(),
		Settings: []statuspage.Setting{containmentSetting(s.runner.Containment()),
			applySlotsSetting(s.scheduler.MaxConcurrent())}})
}

// enforcementLines are enforcement's lines for the status page, what is
// not enforced first.
func (s *Server) enforcementLines() []string {
	lines, warnings := enforcement(s.cfg, s.sandboxErr)
	return append(warnings, lines...)
}

// startStatus serves the status page when status.listen is set, until stop;
// stop ends the log streams with the listener.
func (s *Server) startStatus() (stop func(), err error) {
	if !s.cfg.Status.Enabled() {
		return func() {}, nil
	}
	if err := checkStatusReach(s.cfg, s.sandboxErr); err != nil {
		return func() {}, err
	}
	s.statusAddr, stop, err = listener.Start("status page listener", s.cfg.Status.Listen,
		statuspage.NewServer(s.cfg.Status.Listen, s.withAPI(s.StatusHandler())), statusShutdownGrace, s.log)
	return stop, err
}

const statusShutdownGrace = 2 * time.Second

// applySlotsSetting is the status page's line on apply.max_concurrent.
func applySlotsSetting(n int) statuspage.Setting {
	v := fmt.Sprintf("at most %d applies at once on this replica; more wait; a free slot goes to the repository running the fewest, in merge order within it", n)
	if n == 0 {
		v = "no bound on the applies this replica runs at once"
	}
	return statuspage.Setting{Name: "apply.max_concurrent", Value: v}
}
