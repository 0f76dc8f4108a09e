package apply

import (
	"context"
	"io"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/livestate"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/livelog"
	"github.com/shardgate/shardgate/bot/server/metrics"
	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/bot/statuspage"
	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/coord/endstate"
	"github.com/shardgate/shardgate/coord/traceability"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repopolicy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/planrun"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Apply-on-merge defaults.
const (
	DefaultPreflightWait   = 15 * time.Minute
	DefaultAttestationWait = time.Hour
	// DefaultPoll is the wait between two reads of a wait's condition
	// (a migration to end, a fresh attestation).
	DefaultPoll = 5 * time.Second
	// DefaultProgressEvery is how long convergence runs before the comment
	// shows it.
	DefaultProgressEvery = 10 * time.Second
)

// Applier runs the applies merges start (merge → guarded, converged apply):
// it turns a merge into apply jobs, and runs each the scheduler hands it —
// pre-flight, re-plan of the merge commit, the end-state guard, terraform
// apply, convergence — reporting every step on the pull request through the
// planning side (PullRequest). The Server wires it with the services it
// uses, and nothing else.
type Applier struct {
	Config    *serverconfig.Config
	Records   records.Store
	Applies   *applyqueue.Queue
	Scheduler *applyqueue.Scheduler
	Clients   ghapp.ClientCreator
	Runner    *runner.Runner
	// Binaries are the server's terraform binaries: an apply runs the one
	// its plan ran (nil: Runner).
	Binaries   *planrun.Binaries
	SandboxErr error
	// Engine judges a merge commit's plan no one reviewed (the built-in
	// policy settings), for the message of a refused apply.
	Engine *policy.Engine
	Coords *livestate.Coordinators
	// Coordinators are reached through the job's broker, with these
	// credentials (broker.go).
	Coordinators []coordbroker.Coordinator
	PR           PullRequest
	Checks       *prreport.Checks
	Policies     *repopolicy.Loader
	Metrics      *metrics.Metrics
	Redact       *redact.Redactor
	Now          func() time.Time
	// Logs keeps the terraform output for the status page (nil: not served).
	Logs *livelog.Hub
	// Queue takes the reports GitHub's rate limit held back (reportLater);
	// Notify wakes a worker for them.
	Queue  store.Store
	Notify func()
	// Notifier sends apply_succeeded and apply_failed (nil: none configured).
	Notifier *notify.Notifier

	PreflightWait   time.Duration
	AttestationWait time.Duration
	Poll            time.Duration
	ProgressEvery   time.Duration
}

// PullRequest is what an apply takes from the planning side (plan.Planner):
// the checkout of a commit and the pull request's comment.
type PullRequest interface {
	Checkout(ctx context.Context, ref pullreq.Ref, sha string) (string, func(), error)
	RefreshComment(ctx context.Context, gh ghapp.API, ref pullreq.Ref, final *applyqueue.Job) error
}

// applyRun is one attempt at an apply job, with what it needs along the way.
type applyRun struct {
	s        *Applier
	job      *applyqueue.Job
	gh       ghapp.API
	reviewed *records.Plan
	resuming bool
	// judged are the merge commit's changes as the policy judged them with live
	// state (judgeMerged): what convergence waits for.
	judged  []planparse.Change
	started time.Time
	audit   records.Audit
	cleanup func()
	// live is the status page's live log of the job's terraform output.
	live io.Writer
	// broker passes terraform's coordinator calls, judged (broker.go);
	// stop ends the job when it refuses one.
	broker *coordbroker.Broker
	stop   func()
}

// RunApply runs one apply job to the end: pre-flight, re-plan of the merge
// commit, the plan-equivalence guard, terraform apply, convergence. It is
// called by the scheduler with the job's stream locks held, and again after a
// crash (the lease expired): every step re-reads the world, so resuming is
// re-planning from the current state, never re-applying a stale plan.
func (s *Applier) RunApply(ctx context.Context, job *applyqueue.Job) (applyqueue.State, string) {
	// An earlier attempt of this apply (cut short by a crash, or failed and
	// retried with /shardgate apply) may have moved the starting point itself.
	r := &applyRun{s: s, job: job, started: s.Now(),
		resuming: job.RetryOf != "" || job.Attempt > 1}
	ctx = withJob(ctx, job)
	var endLog func()
	r.live, endLog = s.liveLog(job)
	defer endLog()
	state, reason := r.run(ctx)
	if ctx.Err() != nil {
		return state, reason // shutdown: the scheduler leaves the job to be resumed
	}
	r.finish(context.WithoutCancel(ctx), state, reason)
	return state, reason
}

func (r *applyRun) run(ctx context.Context) (applyqueue.State, string) {
	s, job := r.s, r.job
	var err error
	if r.gh, err = ghapp.APIFor(s.Clients, job.Ref.Installation); err != nil {
		return applyqueue.Failed, "GitHub: " + err.Error()
	}
	if r.reviewed, err = s.Records.Plan(ctx, job.Ref, job.ReviewedSHA, job.Project); err != nil || r.reviewed == nil || r.reviewed.ChangeSet == nil {
		return applyqueue.Failed, "no reviewed plan of " + pullreq.ShortSHA(job.ReviewedSHA) + " is stored for this project"
	}
	r.audit = records.Audit{Seq: job.Seq, Ref: job.Ref, Project: job.Project, MergedBy: job.MergedBy, AppliedBy: job.RequestedBy, MergeSHA: job.MergeSHA,
		ReviewedSHA: job.ReviewedSHA, ReviewedFingerprint: endstate.Fingerprint(r.reviewed.ChangeSet),
		Attestations: r.reviewed.Decision.AttestationsUsed, Attempt: job.Attempt, TerraformOutcome: "not run",
		RequestIDPrefix: traceability.RequestIDPrefix(job.Ref, job.Seq)}
	for _, e := range r.reviewed.Decision.ExceptionsApplied {
		r.audit.Exceptions = append(r.audit.Exceptions, e.Label+" by "+e.Actor)
	}
	if !r.reviewed.Decision.Allowed {
		return applyqueue.Failed, "the reviewed plan was denied by policy; a denied plan is never applied"
	}
	r.startCheck(ctx)
	if state, reason, ok := r.preflight(ctx); !ok {
		return state, reason
	}
	r.cleanup = func() {}
	defer func() { r.cleanup() }()
	ctx, r.stop = context.WithCancel(ctx)
	defer r.stop()
	current, tj, state, reason, ok := r.replan(ctx)
	if !ok {
		return state, reason
	}
	defer tj.Close()
	defer func() { s.Metrics.ObserveLockWaits("apply", tj.LockWaits()) }()
	if state, reason, ok := r.apply(ctx, tj, current); !ok {
		return state, reason
	}
	return r.converge(ctx, r.judged)
}

// judgedChanges are a decision's judged changes, or the plan's when the record
// predates them.
func judgedChanges(cs *planparse.ChangeSet, dec policy.Decision) []planparse.Change {
	if dec.Changes != nil {
		return dec.Changes
	}
	if cs == nil {
		return nil
	}
	return cs.Changes
}

// withJob enriches the context's logger with the job's pull request.
func withJob(ctx context.Context, job *applyqueue.Job) context.Context {
	return logctx.WithLogger(ctx, logctx.Logger(ctx).WithFields(logrus.Fields{logctx.FieldInstallation: job.Ref.Installation,
		logctx.FieldRepo: job.Ref.FullName(), logctx.FieldPR: job.Ref.Number}))
}

// liveLog is the live log of an apply job's attempt.
func (s *Applier) liveLog(job *applyqueue.Job) (io.Writer, func()) {
	return livelog.StartOn(s.Logs, livelog.Info{ID: statuspage.ApplyLogID(job.Seq, job.Attempt), Kind: livelog.KindApply,
		Ref: job.Ref, Project: job.Project, SHA: job.MergeSHA, Seq: job.Seq})
}
