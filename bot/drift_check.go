package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/drift"
	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/internal/keyedmutex"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/metrics"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/pullreq"
	"github.com/shardgate/shardgate/redact"
	"github.com/shardgate/shardgate/repoconfig"
	"github.com/shardgate/shardgate/runner"
	"github.com/shardgate/shardgate/serverconfig"
)

// driftChecker runs the drift checks of a repository: the head of its default
// branch, every project its .shardgate.yaml lists, planned as a pull request
// is (sandbox, plan-phase environment, lock waits) and never applied, judged
// against live state and reported on the project's drift issue.
type driftChecker struct {
	cfg     *serverconfig.Config
	clients ghapp.ClientCreator
	planner *Planner
	runner  *runner.Runner
	// sandboxErr is why terraform cannot be confined: nothing is planned.
	sandboxErr error
	live       drift.LiveReader
	store      drift.Store
	metrics    *metrics.Metrics
	redact     *redact.Redactor
	now        func() time.Time
	// locks: one check of a project at a time (the schedule, a command).
	locks keyedmutex.Mutex
}

// wireDrift builds the drift checker and its schedule (off unless
// drift.interval is set); the health check's pause stops scheduled passes.
func (s *Server) wireDrift() {
	s.drift = &driftChecker{cfg: s.cfg, clients: s.clients, planner: s.planner, runner: s.runner, sandboxErr: s.sandboxErr,
		live: driftLive{s.coords}, store: drift.NewStore(s.store), metrics: s.metrics, redact: s.redact, now: s.now}
	s.driftSched = &drift.Scheduler{Store: s.drift.store, Interval: s.cfg.DriftInterval, Now: s.now, Log: s.log,
		Check: func(ctx context.Context, r drift.Repo) error {
			// The service's logger, which redacts its secrets.
			_, err := s.drift.checkRepo(logctx.WithLogger(ctx, s.log.WithField("trigger", "schedule")), r)
			return err
		}}
}

// sawRepo remembers a repository an event came from, so it is checked.
func (d *driftChecker) sawRepo(ctx context.Context, inst *github.Installation, repo *github.Repository) {
	r := drift.Repo{Installation: inst.GetID(), Owner: repo.GetOwner().GetLogin(), Name: repo.GetName(), DefaultBranch: repo.GetDefaultBranch()}
	if err := d.store.SawRepo(ctx, r); err != nil {
		logctx.Logger(ctx).WithError(err).Warn("drift: remember the repository")
	}
}

// forget stops drift checks of the repositories the App was removed from, or
// of a whole installation deleted or suspended.
func (d *driftChecker) forget(ctx context.Context, inst *github.Installation, action string, removed []*github.Repository) error {
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

// checkRepo checks every listed project of the repository's default branch
// head, one at a time, and returns their records. Problems of a project
// (terraform, the coordinator) are its result; GitHub or store failures and a
// repository configuration that cannot be read are errors.
func (d *driftChecker) checkRepo(ctx context.Context, r drift.Repo) ([]*drift.Record, error) {
	log := logctx.Logger(ctx).WithFields(logrus.Fields{logctx.FieldInstallation: r.Installation, logctx.FieldRepo: r.FullName()})
	ctx = logctx.WithLogger(ctx, log)
	gh, err := ghapp.APIFor(d.clients, r.Installation)
	if err != nil {
		return nil, err
	}
	branch := r.DefaultBranch
	if branch == "" {
		branch = "main"
	}
	sha, err := gh.BranchHead(ctx, r.Owner, r.Name, branch)
	if err != nil {
		return nil, fmt.Errorf("read the head of %s on %s: %w", branch, r.FullName(), err)
	}
	ref := pullreq.Ref{Installation: r.Installation, Owner: r.Owner, Repo: r.Name}
	pol, err := d.planner.policies.For(ctx, gh, ref, branch, sha)
	if err != nil {
		d.metrics.ObserveDriftCheck(string(drift.StatusError))
		return nil, fmt.Errorf("drift check of %s: %w", r.FullName(), err)
	}
	if len(pol.Repo.Projects) == 0 {
		log.Info("drift: .shardgate.yaml lists no projects; nothing to check")
		return nil, nil
	}
	checkout, cleanup, coErr := d.planner.checkout(ctx, ref, sha)
	defer cleanup()
	rep := &drift.Reporter{Issues: gh, Comments: gh, Store: d.store, Redact: d.redact.Redact}
	var out []*drift.Record
	for _, p := range pol.Repo.Projects {
		unlock := d.locks.Lock(r.FullName() + "/" + p.Name)
		res := d.checkProject(ctx, checkout, coErr, p)
		res.Repo, res.Project, res.Branch, res.Commit, res.CheckedAt = r.FullName(), p.Name, branch, sha, d.now().UTC()
		rec, err := rep.Report(ctx, r.Owner, r.Name, res)
		unlock()
		if err != nil {
			return out, err
		}
		d.metrics.ObserveDriftCheck(string(res.Status))
		log.WithFields(logrus.Fields{logctx.FieldProject: p.Name, "status": res.Status, "groups": len(res.Groups), "issue": rec.Issue}).Info("drift: checked")
		out = append(out, rec)
	}
	return out, nil
}

// checkProject plans one project and judges it; Repo, Project, Branch, Commit
// and CheckedAt are the caller's.
func (d *driftChecker) checkProject(ctx context.Context, checkout string, coErr error, p repoconfig.Project) drift.Result {
	fail := func(reason, details string) drift.Result {
		return drift.Failed("", "", "", "", time.Time{}, reason, details)
	}
	switch {
	case d.sandboxErr != nil:
		return fail("terraform cannot be sandboxed on this server: "+d.sandboxErr.Error(), "")
	case checkout == "":
		return fail("the default branch's files could not be fetched: "+errText(coErr), "")
	}
	dir := filepath.Join(checkout, filepath.FromSlash(p.Dir))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fail(fmt.Sprintf("project %q: directory %s does not exist", p.Name, p.Dir), "")
	}
	cs, reason, details := d.plan(ctx, checkout, dir, p)
	if cs == nil {
		return fail(reason, details)
	}
	coordinator, live := d.live.LiveState(ctx, cs)
	return drift.Check(cs, coordinator, live)
}

// plan runs terraform init, plan and show in dir as the plan flow does; on
// failure it returns the redacted reason and terraform's diagnostics.
func (d *driftChecker) plan(ctx context.Context, checkout, dir string, p repoconfig.Project) (*planparse.ChangeSet, string, string) {
	var varFiles []string
	for _, vf := range p.VarFiles {
		varFiles = append(varFiles, filepath.Join(dir, filepath.FromSlash(vf)))
	}
	job, err := d.runner.NewJob(runner.JobConfig{Dir: dir, Root: checkout, Workspace: p.Workspace, VarFiles: varFiles,
		SecretEnv: serverconfig.RevealEnv(d.cfg.PlanEnv),
		OnLockWait: func(w runner.LockWait) {
			logctx.Logger(ctx).WithField(logctx.FieldProject, p.Name).Infof("drift: waiting for the state lock held by %s; never force-unlocked", w.Lock.Holder())
		}})
	if err != nil {
		return nil, oneLine(err.Error()), ""
	}
	defer job.Close()
	defer func() { d.metrics.ObserveLockWaits("plan", job.LockWaits()) }()
	failed := func(err error) (*planparse.ChangeSet, string, string) {
		var lines []string
		for _, dg := range runner.DiagnosticsOf(err) {
			lines = append(lines, job.Redact(dg.String()))
		}
		return nil, job.Redact(err.Error()), strings.Join(lines, "\n")
	}
	if err := job.Init(ctx); err != nil {
		return failed(err)
	}
	if _, err := job.Plan(ctx); err != nil {
		return failed(err)
	}
	shown, err := job.Show(ctx)
	if err != nil {
		return failed(err)
	}
	cs, err := planparse.ParseBytes(shown.JSON)
	if err != nil {
		return nil, "terraform's plan could not be read: " + err.Error(), ""
	}
	return cs, "", ""
}
