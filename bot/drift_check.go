package bot

import (
	"context"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/logctx"
)

// driftChecks are the drift checks of the repositories shardgate has seen:
// the checker (drift.Checker) and where it keeps what it found.
type driftChecks struct {
	*drift.Checker
	store drift.Store
}

// wireDrift builds the drift checker and its schedule (off unless
// drift.interval is set); the health check's pause stops scheduled passes.
func (s *Server) wireDrift() {
	ds := drift.NewStore(s.store)
	s.drift = &driftChecks{store: ds, Checker: &drift.Checker{Clients: s.clients, Policies: s.policies,
		Checkout: s.checkouts.Checkout, Runner: s.runner, Binaries: s.binaries, SandboxErr: s.sandboxErr,
		PlanEnv:      func() map[string]string { return serverconfig.RevealEnv(s.cfg.PlanEnv) },
		Writable:     s.cfg.ProjectWritable,
		Coordinators: brokerCoordinators(s.cfg), Egress: s.cfg.Egress,
		Live: driftLive{s.coords}, Store: ds, Metrics: s.metrics, Redact: s.redact.Redact, Now: s.now,
		Notifier: s.notifier, GitHubAPIURL: s.cfg.GitHubAPIURL}}
	s.driftSched = &drift.Scheduler{Store: ds, Interval: s.cfg.DriftInterval, Now: s.now, Log: s.log,
		Check: func(ctx context.Context, r drift.Repo) error {
			// The service's logger, which redacts its secrets.
			_, err := s.drift.CheckRepo(logctx.WithLogger(ctx, s.log.WithField("trigger", "schedule")), r)
			return err
		}}
}

// sawRepo remembers a repository an event came from, so it is checked.
func (d *driftChecks) sawRepo(ctx context.Context, inst *github.Installation, repo *github.Repository) {
	r := drift.Repo{Installation: inst.GetID(), Owner: repo.GetOwner().GetLogin(), Name: repo.GetName(), DefaultBranch: repo.GetDefaultBranch()}
	if err := d.store.SawRepo(ctx, r); err != nil {
		logctx.Logger(ctx).WithError(err).Warn("drift: remember the repository")
	}
}

// forget stops drift checks of the repositories the App was removed from, or
// of a whole installation deleted or suspended.
func (d *driftChecks) forget(ctx context.Context, inst *github.Installation, action string, removed []*github.Repository) error {
	if action == "deleted" || action == "suspend" {
		return d.store.ForgetInstallation(ctx, inst.GetID())
	}
	for _, r := range removed {
		owner, name, ok := strings.Cut(r.GetFullName(), "/")
		if !ok {
			continue
		}
		if err := d.store.ForgetRepo(ctx, owner, name); err != nil {
			return err
		}
	}
	return nil
}

// declaredByDriftChecks is what the projects of the repositories shardgate
// governs ask of streams, as their last drift check recorded it: what a pull
// request of another repository is judged together with.
func declaredByDriftChecks(ds drift.Store) plan.DeclaredCounts {
	return func(ctx context.Context) ([]plan.Declared, error) {
		recs, err := ds.List(ctx)
		if err != nil {
			return nil, err
		}
		var out []plan.Declared
		for _, r := range recs {
			if len(r.Desired) > 0 {
				out = append(out, plan.Declared{Repo: r.Repo, Project: r.Project, Source: "last drift check", At: r.CheckedAt, Desired: r.Desired})
			}
		}
		return out, nil
	}
}
