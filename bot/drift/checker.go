package drift

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/server/metrics"
	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/keyedmutex"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/policy/repopolicy"
	"github.com/shardgate/shardgate/terraform/planrun"
	"github.com/shardgate/shardgate/terraform/runner"
)

// CheckoutFunc fetches a commit's tree into a fresh directory; cleanup
// removes it (and is set even on error).
type CheckoutFunc func(ctx context.Context, ref pullreq.Ref, sha string) (dir string, cleanup func(), err error)

// Checker runs the drift checks of a repository: the head of its default
// branch, every project its .shardgate.yaml lists, planned as a pull request
// is (sandbox, plan-phase environment, lock waits) and never applied, judged
// against live state and reported on the project's drift issue.
type Checker struct {
	Clients  ghapp.ClientCreator
	Policies *repopolicy.Loader
	Checkout CheckoutFunc
	Runner   *runner.Runner
	// Binaries choose each project's terraform (nil: Runner's).
	Binaries *planrun.Binaries
	// SandboxErr is why terraform cannot be confined: nothing is planned.
	SandboxErr error
	// PlanEnv is the plan phase's credentials (plan_env), read per plan.
	PlanEnv func() map[string]string
	// Writable are the directories one project's plan alone may write
	// (serverconfig.Config.ProjectWritable); nil: none.
	Writable func(owner, repo, project string) ([]string, error)
	// Coordinators are reached through a read-only broker (planrun).
	Coordinators []coordbroker.Coordinator
	// Egress are the other hosts terraform may reach (terraform.egress).
	Egress  []string
	Live    LiveReader
	Store   Store
	Metrics *metrics.Metrics
	// Redact removes the server's secrets from what reaches GitHub.
	Redact func(string) string
	Now    func() time.Time
	// Notifier and GitHubAPIURL: see Reporter.
	Notifier     *notify.Notifier
	GitHubAPIURL string

	// locks: one check of a project at a time (the schedule, a command).
	locks keyedmutex.Mutex
}

// CheckRepo checks every listed project of the repository's default branch
// head, one at a time, and returns their records. Problems of a project
// (terraform, the coordinator) are its result; GitHub or store failures and a
// repository configuration that cannot be read are errors. Such an error is a
// failed check too: it counts as one (outcome error) and the repository's
// record keeps it, for the status page, until a check of it succeeds.
func (d *Checker) CheckRepo(ctx context.Context, r Repo) ([]*Record, error) {
	recs, err := d.checkRepo(ctx, r)
	if errors.Is(err, context.Canceled) {
		return recs, err
	}
	msg := ""
	if err != nil {
		d.Metrics.ObserveDriftCheck(string(StatusError))
		msg = err.Error()
		if d.Redact != nil {
			msg = d.Redact(msg)
		}
	}
	if serr := d.Store.RepoChecked(context.WithoutCancel(ctx), r.Owner, r.Name, msg, d.Now().UTC()); serr != nil {
		logctx.Logger(ctx).WithError(serr).Warn("drift: record the repository's check")
	}
	return recs, err
}

func (d *Checker) checkRepo(ctx context.Context, r Repo) ([]*Record, error) {
	log := logctx.Logger(ctx).WithFields(logrus.Fields{logctx.FieldInstallation: r.Installation, logctx.FieldRepo: r.FullName()})
	ctx = logctx.WithLogger(ctx, log)
	gh, err := ghapp.APIFor(d.Clients, r.Installation)
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
	pol, err := d.Policies.For(ctx, gh, ref, branch, sha)
	if err != nil {
		return nil, fmt.Errorf("drift check of %s: %w", r.FullName(), err)
	}
	if len(pol.Repo.Projects) == 0 {
		log.Info("drift: .shardgate.yaml lists no projects; nothing to check")
		return nil, nil
	}
	checkout, cleanup, coErr := d.Checkout(ctx, ref, sha)
	defer cleanup()
	rep := &Reporter{Issues: gh, Comments: gh, Store: d.Store, Redact: d.Redact, Notifier: d.Notifier, GitHubAPIURL: d.GitHubAPIURL}
	var out []*Record
	for _, p := range pol.Repo.Projects {
		unlock := d.locks.Lock(r.FullName() + "/" + p.Name)
		res := d.checkProject(ctx, r, checkout, coErr, p, sha)
		res.Repo, res.Project, res.Branch, res.Commit, res.CheckedAt = r.FullName(), p.Name, branch, sha, d.Now().UTC()
		rec, err := rep.Report(ctx, r.Owner, r.Name, res)
		unlock()
		if err != nil {
			return out, fmt.Errorf("report the drift check of %s: %w", p.Name, err)
		}
		d.Metrics.ObserveDriftCheck(string(res.Status))
		log.WithFields(logrus.Fields{logctx.FieldProject: p.Name, "status": res.Status, "groups": len(res.Groups), "issue": rec.Issue}).Info("drift: checked")
		out = append(out, rec)
	}
	return out, nil
}

// checkProject plans one project and judges it; Repo, Project, Branch, Commit
// and CheckedAt are the caller's.
func (d *Checker) checkProject(ctx context.Context, r Repo, checkout string, coErr error, p repoconfig.Project, sha string) Result {
	fail := func(reason, details string) Result {
		return Failed("", "", "", "", time.Time{}, reason, details)
	}
	switch {
	case d.SandboxErr != nil:
		return fail("terraform cannot be sandboxed on this server: "+d.SandboxErr.Error(), "")
	case checkout == "":
		reason := "unknown error"
		if coErr != nil {
			reason = coErr.Error()
		}
		return fail("the default branch's files could not be fetched: "+reason, "")
	}
	var writable []string
	if d.Writable != nil {
		var err error
		if writable, err = d.Writable(r.Owner, r.Name, p.Name); err != nil {
			return fail(err.Error(), "")
		}
	}
	res := planrun.Run(ctx, d.Runner, planrun.Request{Checkout: checkout, Project: p, Commit: sha, SecretEnv: d.PlanEnv(), Writable: writable,
		Binaries: d.Binaries, Coordinators: d.Coordinators, Egress: d.Egress, OnLockWait: func(w runner.LockWait) {
			logctx.Logger(ctx).WithField(logctx.FieldProject, p.Name).Infof("drift: waiting for the state lock held by %s; never force-unlocked", w.Lock.Holder())
		}})
	d.Metrics.ObserveLockWaits("plan", res.LockWaits)
	if res.Failed() {
		var details []string
		for _, dg := range res.Diagnostics {
			details = append(details, runner.Diagnostic(dg).String())
		}
		return fail(res.Error, strings.Join(details, "\n"))
	}
	coordinator, live := d.Live.LiveState(ctx, res.ChangeSet)
	return Check(res.ChangeSet, coordinator, live)
}
