package bot

import (
	"time"

	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/policy/repopolicy"
)

// wireFlows builds the services the handlers and the flows share (the
// approvers, the comment, the check runs, the exception labels, the
// checkouts, the repositories' policies), then the Planner and the Applier,
// each given the ones it uses. The live logs are wired before: both flows
// write their terraform output to them.
func (s *Server) wireFlows() {
	cfg := s.cfg
	s.approvers = approval.NewApprovers(cfg, s.now)
	s.comments = prreport.NewComments(s.redact)
	s.checks = prreport.NewChecks(s.store, cfg.AppID, s.redact, s.now)
	s.labels = approval.NewLabels(s.rec, s.approvers)
	s.checkouts = &plan.Checkouts{Clients: s.clients, APIURL: cfg.GitHubAPIURL, Dir: s.workDir, Now: s.now}
	s.policies = repopolicy.NewLoader(cfg.Policy, cfg.AllowRepoOverride, s.engine, s.checkouts.Checkout)
	coordinators := brokerCoordinators(cfg)
	s.planner = &plan.Planner{Config: cfg, Records: s.rec, Clients: s.clients, Checkouts: s.checkouts, Runner: s.runner,
		SandboxErr: s.sandboxErr, Coordinators: coordinators, Coords: s.coords, Policies: s.policies,
		Comments: s.comments, Checks: s.checks, Labels: s.labels,
		Render:  &prreport.Renderer{Rules: s.rules, Approvers: s.approvers.Text(), Redact: s.redact},
		Applies: s.applies, PRLocks: &s.prLocks, Metrics: s.metrics, Now: s.now, Logs: s.liveLogs}
	s.applier = &Applier{cfg: cfg, rec: s.rec, applies: s.applies, scheduler: s.scheduler, clients: s.clients,
		runner: s.runner, sandboxErr: s.sandboxErr, engine: s.engine, coords: s.coords, pr: s.planner, checks: s.checks,
		policies: s.policies, metrics: s.metrics, redact: s.redact, now: s.now, logs: s.liveLogs,
		preflightWait: DefaultPreflightWait, attestationWait: DefaultAttestationWait,
		applyPoll: defaultApplyPoll, progressEvery: 10 * time.Second, queue: s.store}
	s.applier.notify = func() { s.dispatcher.Notify() }
}
