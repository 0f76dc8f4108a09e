package bot

import (
	"github.com/shardgate/shardgate/bot/apply"
	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/coord/coordbroker"
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
	s.planner = &plan.Planner{Config: cfg, Records: s.rec, Clients: s.clients, Checkouts: s.checkouts, Runner: s.runner, Binaries: s.binaries,
		SandboxErr: s.sandboxErr, Coordinators: coordinators, Coords: s.coords, Policies: s.policies,
		Comments: s.comments, Checks: s.checks, Labels: s.labels,
		Render:  &prreport.Renderer{Rules: s.rules, Approvers: s.approvers.Text(), Redact: s.redact},
		Applies: s.applies, PRLocks: &s.prLocks, Metrics: s.metrics, Now: s.now, Logs: s.liveLogs,
		Declared: declaredByDriftChecks(drift.NewStore(s.store))}
	s.applier = &apply.Applier{Config: cfg, Records: s.rec, Applies: s.applies, Scheduler: s.scheduler, Clients: s.clients,
		Runner: s.runner, Binaries: s.binaries, SandboxErr: s.sandboxErr, Engine: s.engine, Coords: s.coords, Coordinators: coordinators,
		PR: s.planner, Checks: s.checks, Policies: s.policies, Metrics: s.metrics, Redact: s.redact, Now: s.now,
		Logs: s.liveLogs, Queue: s.store, Notify: func() { s.dispatcher.Notify() }, Notifier: s.notifier,
		PreflightWait: apply.DefaultPreflightWait, AttestationWait: apply.DefaultAttestationWait,
		Poll: apply.DefaultPoll, ProgressEvery: apply.DefaultProgressEvery}
}

// The applies reach the planner for a commit's checkout and the comment.
var _ apply.PullRequest = (*plan.Planner)(nil)

// brokerCoordinators are the configured coordinators with their credentials.
func brokerCoordinators(cfg *serverconfig.Config) []coordbroker.Coordinator {
	var out []coordbroker.Coordinator
	for _, c := range cfg.Coordinators {
		out = append(out, coordbroker.Coordinator{URL: c.URLPrefix, Username: c.Username, Password: c.Password.Reveal()})
	}
	return out
}
