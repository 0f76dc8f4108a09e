package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/livestate"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/livelog"
	"github.com/shardgate/shardgate/bot/server/metrics"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/keyedmutex"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/internal/phases"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/policy/repopolicy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/planrun"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Planner is the plan flow (PR → plans → comment and checks): it loads a
// pull request, checks out its head, plans each affected project with
// terraform, judges the plans by the policy with the coordinators' live state
// and the pull request's labels and attestations, and keeps the comment and
// the check runs up to date, applies included. The Server wires it with the
// services it uses, and nothing else.
type Planner struct {
	Config    *serverconfig.Config
	Records   records.Store
	Clients   ghapp.ClientCreator
	Checkouts *Checkouts
	Runner    *runner.Runner
	// Binaries choose each project's terraform (nil: Runner's).
	Binaries   *planrun.Binaries
	SandboxErr error
	// Coordinators are reached through the plan's read-only broker (planrun).
	Coordinators []coordbroker.Coordinator
	Coords       *livestate.Coordinators
	Policies     *repopolicy.Loader
	Comments     *prreport.Comments
	Checks       *prreport.Checks
	Render       *prreport.Renderer
	Labels       *approval.Labels
	// Applies are the apply queue as the comment shows it (nil: none).
	Applies ApplyView
	// PRLocks are the server's: one job of a pull request at a time.
	PRLocks *keyedmutex.Mutex
	Metrics *metrics.Metrics
	Now     func() time.Time
	// Logs keeps the terraform output for the status page (nil: not served).
	Logs *livelog.Hub
	// Declared are the counts other repositories ask (nil: not consulted).
	Declared DeclaredCounts
	// groups are the merge-group plans running here (group.go).
	groups groupJobs
	// prPlans are the pull-request plans running here (cancel.go).
	prPlans prPlans
	// slots bound the terraform runs of pull-request and merge-group plans (parallel.go).
	slots planSlots
}

// ApplyView is what the Planner reads of the apply queue for the comment: a
// pull request's applies, and what a queued one waits behind.
type ApplyView interface {
	ListForPR(ctx context.Context, ref pullreq.Ref) ([]*applyqueue.Job, error)
	Blockers(ctx context.Context, seq string) ([]applyqueue.Blocker, error)
}

var _ ApplyView = (*applyqueue.Queue)(nil)

// Request says which pull request to plan and why.
type Request struct {
	Ref pullreq.Ref
	// Explicit is set when someone asked (a /shardgate plan comment, a re-run
	// check): drafts are planned then too.
	Explicit bool
	Trigger  string
	// Event is the pull_request event that asked, nil for none.
	Event *Event
}

// PlanPR plans every affected project of a pull request's head commit and
// reports on the PR. Problems of the pull request itself (bad configuration,
// terraform failures, a refused checkout) are reported there and are not job
// errors; GitHub or store failures are.
func (s *Planner) PlanPR(ctx context.Context, req Request) error {
	ctx, done := s.prPlans.add(ctx, req.Ref.Key())
	defer done()
	unlock := s.PRLocks.LockOrWait(req.Ref.Key(), func() { s.noteQueued(ctx, req.Ref) })
	defer unlock()
	ctx, timings := phases.With(ctx)
	defer s.logPhases(ctx, timings, time.Now())
	return s.cancellable(ctx, req.Ref, func(ctx context.Context) error { return s.planPRLocked(ctx, req) })
}

// logPhases says where a plan job's time went, in its log and metrics.
func (s *Planner) logPhases(ctx context.Context, t *phases.Timings, start time.Time) {
	d := t.Get()
	s.Metrics.ObservePlanPhases(d)
	fields := t.Millis()
	fields["total_ms"] = time.Since(start).Milliseconds()
	logctx.Logger(ctx).WithFields(fields).Info("plan job phases")
}

// noteQueued tells the PR that its plan waits for another shardgate job of the
// same pull request. Best effort: the running job owns the comment and its
// next edit may replace this line, and this job's own edits follow soon.
func (s *Planner) noteQueued(ctx context.Context, ref pullreq.Ref) {
	st, err := s.Records.PR(ctx, ref)
	if err != nil || st == nil || st.CommentID == 0 {
		return
	}
	gh, err := ghapp.APIFor(s.Clients, ref.Installation)
	if err != nil {
		return
	}
	plans, err := s.Records.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("show the queued status: read the stored plans")
		return
	}
	st.Status = "queued: another shardgate job of this pull request is running; this plan follows it."
	if err := s.Comments.Upsert(ctx, gh, st, s.RenderComment(ctx, st, records.OrderPlans(plans, st.Projects))); err != nil {
		logctx.Logger(ctx).WithError(err).Warn("show the queued status")
	}
}

func (s *Planner) planPRLocked(ctx context.Context, req Request) error {
	gh, pr, st, err := s.loadPREvent(ctx, req.Ref, req.Event)
	if err != nil {
		return err
	}
	log := logctx.Logger(ctx).WithFields(logrus.Fields{logctx.FieldRepo: req.Ref.FullName(), logctx.FieldPR: req.Ref.Number, logctx.FieldSHA: st.HeadSHA})
	switch {
	case pr.State != "open":
		log.Info("pull request is not open; not planning")
		return nil
	case isFork(pr) && !s.Config.AllowForkPRs:
		st.Status = "not planned: this pull request comes from a fork, and this shardgate server does not run Terraform for forks (`allow_fork_prs` is off). Push the branch to this repository instead."
		return s.publishRefused(ctx, gh, st)
	case s.SandboxErr != nil:
		st.Status = sandboxRefusedStatus(s.SandboxErr)
		return s.publishRefused(ctx, gh, st)
	case pr.Draft && !req.Explicit:
		st.Status = "draft: shardgate plans when the pull request is ready for review, or when someone with write access comments `/shardgate plan`."
		return s.Publish(ctx, gh, st, nil)
	}
	st.Status = fmt.Sprintf("planning `%s`…", pullreq.ShortSHA(st.HeadSHA))
	st.ConfigError = ""
	if err := s.Publish(ctx, gh, st, nil); err != nil {
		return err
	}
	gateID, err := s.startGate(ctx, gh, st)
	if err != nil {
		return err
	}

	pol, err := s.Policies.For(ctx, gh, req.Ref, pr.BaseRef, pr.BaseSHA)
	var cfgErr *repoconfig.Error
	if errors.As(err, &cfgErr) {
		return s.reportConfigError(ctx, gh, st, err)
	}
	if err != nil {
		st.Status = "failed: " + report.FirstLine(err.Error())
		if perr := s.Publish(ctx, gh, st, nil); perr != nil {
			logctx.Logger(ctx).WithError(perr).Warn("show the failure on the PR")
		}
		return err
	}
	// The head, checked out when first asked (for the module graph, or for the
	// plans) and then kept for both.
	tree := &headTree{fetch: func() (string, []ghapp.SkippedLink, func(), error) {
		defer phases.Start(ctx, phases.Checkout)()
		return s.Checkouts.Tree(phases.Within(ctx, phases.Checkout), req.Ref, st.HeadSHA)
	}}
	defer tree.remove()
	projects, err := projectsOf(ctx, gh, req.Ref, *pr, pol.Repo, tree.root)
	if err != nil {
		return err
	}
	if limit := s.Config.ProjectsPerPRLimit(); len(projects) > limit {
		return s.reportConfigError(ctx, gh, st, &repoconfig.Error{Source: repoconfig.FileName + " on " + pr.BaseRef, Problems: []string{fmt.Sprintf(
			"this pull request selects %d projects, more than the %d this server plans for one pull request (max_projects_per_pr); nothing was planned: "+
				"change fewer projects at once, or list fewer projects on the directories it changes", len(projects), limit)}})
	}
	st.Projects = nil
	for _, p := range projects {
		st.Projects = append(st.Projects, p.Name)
	}
	if len(projects) == 0 {
		st.Status = "done: no Terraform project changed in this pull request."
		if pol.Repo.Explicit && len(pol.Repo.Projects) > 0 {
			st.Status = "done: no project reads the files this pull request changes (nor a local module they call, nor their `when_modified` files), so nothing was planned."
		}
		if err := s.Publish(ctx, gh, st, nil); err != nil {
			return err
		}
		return s.finishGate(ctx, gh, st, gateID, nil, "")
	}
	checkout, skipped, coErr := tree.get()
	plans, err := s.planAll(ctx, gh, st, pol, checkout, skipped, coErr, projects)
	if err != nil {
		return err
	}
	if coErr == nil {
		together, err := s.judgeTogether(ctx, req.Ref, st.HeadSHA, checkout, pol.Repo, plans)
		if err != nil {
			return err
		}
		for _, rec := range plans {
			if !awaitsPeers(rec) {
				continue // its check run is completed (planOne)
			}
			if slices.Contains(together, rec) {
				if err := s.evaluate(ctx, gh, st, rec, pol); err != nil {
					return err
				}
			}
			if err := s.FinishPlan(ctx, gh, st, rec); err != nil {
				return err
			}
		}
	}
	st.Status = fmt.Sprintf("done: planned %s at %s.", plural(len(plans), "project"), s.Now().UTC().Format("2006-01-02 15:04 MST"))
	if err := s.Publish(ctx, gh, st, plans); err != nil {
		return err
	}
	return s.finishGate(ctx, gh, st, gateID, plans, "")
}

// publishRefused shows why the head is not planned, and fails its aggregate
// check: a head shardgate does not judge must not pass a required check.
func (s *Planner) publishRefused(ctx context.Context, gh ghapp.API, st *records.PRState) error {
	if err := s.Publish(ctx, gh, st, nil); err != nil {
		return err
	}
	return s.finishGate(ctx, gh, st, 0, nil, st.Status)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// runProject plans rec's commit of one project with terraform, telling
// onLockWait of each wait for the state lock, and parses the plan into rec.
func (s *Planner) runProject(ctx context.Context, ref pullreq.Ref, rec *records.Plan, checkout string, p repoconfig.Project, onLockWait func(runner.LockWait)) {
	defer s.Metrics.TimePlan(func() bool { return rec.Error != "" })()
	writable, err := s.Config.ProjectWritable(ref.Owner, ref.Repo, p.Name)
	if err != nil {
		rec.Error = err.Error()
		return
	}
	live, endLog := livelog.StartOn(s.Logs, livelog.Info{Kind: livelog.KindPlan, Ref: ref, Project: p.Name, SHA: rec.HeadSHA})
	defer endLog()
	res := planrun.Run(ctx, s.Runner, planrun.Request{Checkout: checkout, Project: p, Commit: rec.HeadSHA, Writable: writable, Binaries: s.Binaries,
		SecretEnv: serverconfig.RevealEnv(s.Config.PlanEnv), Output: live, Coordinators: s.Coordinators, Egress: s.Config.Egress,
		OnLockWait: onLockWait})
	for _, w := range res.LockWaits {
		rec.LockWaits = append(rec.LockWaits, report.LockWait(w))
	}
	rec.TerraformPath = res.Binary.Path
	if s.Binaries != nil && s.Binaries.Several() && res.Binary.Path != "" {
		rec.Terraform = res.Binary.Name()
	}
	s.Metrics.ObserveLockWaits("plan", res.LockWaits)
	if res.Failed() {
		rec.Error, rec.Diagnostics = res.Error, res.Diagnostics
		return
	}
	cs := res.ChangeSet
	rec.ChangeSet = cs
	rec.Fingerprint = records.Fingerprint(cs)
	stop := phases.Start(ctx, phases.LiveReads)
	rec.Coordinator, rec.Live = s.Coords.Read(ctx, cs)
	stop()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Reevaluate judges the stored plans of the head commit again (labels or
// attestations changed), planning first when there are none.
func (s *Planner) Reevaluate(ctx context.Context, ref pullreq.Ref) error {
	unlock := s.PRLocks.Lock(ref.Key())
	defer unlock()
	gh, pr, st, err := s.loadPR(ctx, ref)
	if err != nil {
		return err
	}
	plans, err := s.Records.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		return err
	}
	if len(plans) == 0 {
		if pr.State != "open" || (pr.Draft && st.Projects == nil) {
			return s.Records.PutPR(ctx, st)
		}
		return s.planPRLocked(ctx, Request{Ref: ref, Trigger: "re-evaluation"})
	}
	pol, err := s.Policies.For(ctx, gh, ref, pr.BaseRef, pr.BaseSHA)
	var cfgErr *repoconfig.Error
	if errors.As(err, &cfgErr) {
		return s.reportConfigError(ctx, gh, st, err)
	}
	if err != nil {
		return err
	}
	for _, rec := range plans {
		if rec.ChangeSet == nil {
			continue
		}
		if err := s.evaluate(ctx, gh, st, rec, pol); err != nil {
			return err
		}
		if err := s.FinishPlan(ctx, gh, st, rec); err != nil {
			return err
		}
	}
	plans = records.OrderPlans(plans, st.Projects)
	if err := s.Publish(ctx, gh, st, plans); err != nil {
		return err
	}
	return s.finishGate(ctx, gh, st, 0, plans, "")
}
