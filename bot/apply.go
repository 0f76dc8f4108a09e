package bot

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/applyqueue"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/endstate"
	"github.com/shardgate/shardgate/internal/retry"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/records"
	"github.com/shardgate/shardgate/runner"
	"github.com/shardgate/shardgate/serverconfig"
)

// Apply-on-merge defaults.
const (
	DefaultPreflightWait   = 15 * time.Minute
	DefaultAttestationWait = time.Hour
	defaultApplyPoll       = 5 * time.Second
)

// enqueueApplies turns a merge into one apply job per project whose reviewed
// plan changes the coordinator, in merge order. A redelivered merge adds nothing.
func (s *Server) enqueueApplies(ctx context.Context, gh *github.Client, st *records.PRState, pr *github.PullRequest) error {
	if def := pr.GetBase().GetRepo().GetDefaultBranch(); def != "" && pr.GetBase().GetRef() != def {
		st.Status = fmt.Sprintf("merged into `%s`, not the default branch `%s`: shardgate applies merges into the default branch only.", pr.GetBase().GetRef(), def)
		return nil
	}
	reviewed := pr.GetHead().GetSHA()
	plans, err := s.rec.Plans(ctx, st.Ref, reviewed)
	if err != nil {
		return err
	}
	existing, err := s.applies.ListForPR(ctx, st.Ref)
	if err != nil {
		return err
	}
	queued := 0
	for _, p := range orderPlans(plans, st.Projects) {
		if p.ChangeSet == nil || len(endstate.Streams(p.ChangeSet)) == 0 {
			continue
		}
		if hasApply(existing, p.Project, pr.GetMergeCommitSHA()) {
			continue
		}
		job := &applyqueue.Job{Ref: st.Ref, Project: p.Project, Streams: endstate.Streams(p.ChangeSet), ReviewedSHA: reviewed,
			Sensitive: p.ChangeSet.SensitiveValues(),
			MergeSHA:  pr.GetMergeCommitSHA(), MergedBy: pr.GetMergedBy().GetLogin()}
		if err := s.applies.Enqueue(ctx, job); errors.Is(err, applyqueue.ErrApplyExists) {
			continue // a redelivered or re-run merge event: already queued
		} else if err != nil {
			return err
		}
		queued++
	}
	switch {
	case len(plans) == 0:
		st.Status = "merged, but shardgate never planned the merged head commit: nothing to apply."
	case queued == 0 && len(existing) == 0:
		st.Status = "merged; no coordinator changes to apply."
	default:
		st.Status = fmt.Sprintf("merged by %s; applying in merge order, one stream at a time.", pr.GetMergedBy().GetLogin())
	}
	s.scheduler.Notify()
	return nil
}

func hasApply(jobs []*applyqueue.Job, project, mergeSHA string) bool {
	for _, j := range jobs {
		if j.Project == project && j.MergeSHA == mergeSHA {
			return true
		}
	}
	return false
}

// applyRun is one attempt at an apply job, with what it needs along the way.
type applyRun struct {
	s        *Server
	job      *applyqueue.Job
	gh       *github.Client
	reviewed *records.Plan
	resuming bool
	// judged are the merge commit's changes as the policy judged them with live
	// state (judgeMerged): what convergence waits for.
	judged  []planparse.Change
	started time.Time
	audit   records.Audit
	cleanup func()
	// requestLog is the file the stream-group module lists its coordinator
	// request ids in (RequestIDLogEnv), "" before the re-plan made it.
	requestLog string
}

// runApply runs one apply job to the end: pre-flight, re-plan of the merge
// commit, the plan-equivalence guard, terraform apply, convergence. It is
// called by the scheduler with the job's stream locks held, and again after a
// crash (the lease expired): every step re-reads the world, so resuming is
// re-planning from the current state, never re-applying a stale plan.
func (s *Server) runApply(ctx context.Context, job *applyqueue.Job) (applyqueue.State, string) {
	// An earlier attempt of this apply (cut short by a crash, or failed and
	// retried with /shardgate apply) may have moved the starting point itself.
	r := &applyRun{s: s, job: job, started: s.now(),
		resuming: job.RetryOf != "" || job.Attempt > 1}
	ctx = withPR(ctx, job.Ref)
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
	if r.gh, err = s.clients.NewInstallationClient(job.Ref.Installation); err != nil {
		return applyqueue.Failed, "GitHub: " + err.Error()
	}
	if r.reviewed, err = s.rec.Plan(ctx, job.Ref, job.ReviewedSHA, job.Project); err != nil || r.reviewed == nil || r.reviewed.ChangeSet == nil {
		return applyqueue.Failed, "no reviewed plan of " + shortSHA(job.ReviewedSHA) + " is stored for this project"
	}
	r.audit = records.Audit{Seq: job.Seq, Ref: job.Ref, Project: job.Project, MergedBy: job.MergedBy, MergeSHA: job.MergeSHA,
		ReviewedSHA: job.ReviewedSHA, ReviewedFingerprint: endstate.Fingerprint(r.reviewed.ChangeSet),
		Attestations: r.reviewed.Decision.AttestationsUsed, Attempt: job.Attempt, TerraformOutcome: "not run",
		RequestIDPrefix: requestIDPrefix(job.Ref, job.Seq)}
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
	current, tj, state, reason, ok := r.replan(ctx)
	if !ok {
		return state, reason
	}
	defer tj.Close()
	defer func() { s.metrics.ObserveLockWaits("apply", tj.LockWaits()) }()
	if state, reason, ok := r.apply(ctx, tj, current); !ok {
		return state, reason
	}
	return r.converge(ctx, r.judged)
}

// preflight checks the attestations and the coordinator before anything runs.
func (r *applyRun) preflight(ctx context.Context) (applyqueue.State, string, bool) {
	r.progress(ctx, applyqueue.Preflight, "checking the coordinator and the attestations")
	if reason, ok := r.waitAttestations(ctx); !ok {
		return applyqueue.Failed, reason, false
	}
	targets := endstate.ScaleTargets(judgedChanges(r.reviewed.ChangeSet, r.reviewed.Decision))
	for _, stream := range r.job.Streams {
		target, ok := targets[stream]
		if !ok {
			continue // unmanage/delete only: nothing to scale
		}
		coordinator, prefix := planparse.SplitStreamKey(stream)
		client, err := r.s.coordClient(coordinator)
		if err != nil {
			return applyqueue.Failed, err.Error(), false
		}
		deadline := r.s.now().Add(r.s.preflightWait)
		for {
			res, err := client.Preflight(ctx, prefix, target)
			if err != nil {
				return applyqueue.Failed, "pre-flight: the coordinator could not be read: " + oneLine(err.Error()), false
			}
			if res.OK() {
				break
			}
			waitable := true
			for _, f := range res.Blocking() {
				if f.Kind != coord.FindingActiveMigration {
					waitable = false
				}
			}
			if r.resuming && waitable {
				break // our own scale's migration, from before the crash: converge will wait for it
			}
			if !waitable {
				return applyqueue.Failed, "pre-flight refused: " + res.Summary(), false
			}
			if r.s.now().After(deadline) {
				return applyqueue.Failed, fmt.Sprintf("pre-flight: stream %s still has an active migration after %s: %s", prefix, r.s.preflightWait, res.Summary()), false
			}
			r.progress(ctx, applyqueue.Preflight, "waiting: "+res.Summary())
			if err := retry.Sleep(ctx, r.s.applyPoll); err != nil {
				return applyqueue.Failed, "interrupted", false
			}
		}
	}
	return "", "", true
}

// waitAttestations makes sure every attestation the review relied on is still
// fresh; an expired one is asked for again on the PR, and waited for.
func (r *applyRun) waitAttestations(ctx context.Context) (string, bool) {
	deadline := r.s.now().Add(r.s.attestationWait)
	for {
		var expired []string
		atts, err := r.s.rec.Attestations(ctx, r.job.Ref, r.job.ReviewedSHA)
		if err != nil {
			return "store: " + err.Error(), false
		}
		for _, used := range r.reviewed.Decision.AttestationsUsed {
			if !freshAttestation(atts, used.StreamPrefix, r.s.now()) {
				expired = append(expired, used.StreamPrefix)
			}
		}
		if len(expired) == 0 {
			return "", true
		}
		if r.s.now().After(deadline) {
			return fmt.Sprintf("the producer-quiesce attestation for %s expired and no fresh one came within %s", strings.Join(expired, ", "), r.s.attestationWait), false
		}
		var cmds []string
		for _, p := range expired {
			cmds = append(cmds, "`/shardgate attest quiesce "+p+"`")
		}
		r.progress(ctx, applyqueue.Preflight, "waiting for a fresh producer-quiesce attestation: the one given at review has expired; an approver comments "+strings.Join(cmds, " and ")+" once producers are paused again")
		if err := retry.Sleep(ctx, r.s.applyPoll); err != nil {
			return "interrupted", false
		}
	}
}

func freshAttestation(atts []policy.Attestation, stream string, now time.Time) bool {
	for _, a := range atts {
		if a.StreamPrefix == stream && a.ExpiresAt.After(now) {
			return true
		}
	}
	return false
}

// replan plans the merge commit and compares it with the review.
func (r *applyRun) replan(ctx context.Context) (*planparse.ChangeSet, *runner.Job, applyqueue.State, string, bool) {
	s, job := r.s, r.job
	r.progress(ctx, applyqueue.Planning, "re-planning the merge commit "+shortSHA(job.MergeSHA))
	checkout, cleanup, err := s.checkout(ctx, job.Ref, job.MergeSHA)
	r.cleanup = cleanup
	if err != nil {
		return nil, nil, applyqueue.Failed, "fetch the merge commit: " + oneLine(err.Error()), false
	}
	env := traceEnv(filepath.Join(checkout, filepath.FromSlash(r.reviewed.Dir)), job.Ref, job.MergeSHA, job.MergedBy, job.Seq)
	if r.requestLog, err = newRequestLog(checkout); err != nil {
		return nil, nil, applyqueue.Failed, err.Error(), false
	}
	env[RequestIDLogEnv] = r.requestLog
	tj, err := s.applyJob(checkout, r.reviewed, env, func(w runner.LockWait) {
		r.progress(ctx, r.job.State, "waiting for the Terraform state lock held by "+w.Lock.Holder()+"; shardgate waits and never force-unlocks")
	})
	if err != nil {
		return nil, nil, applyqueue.Failed, err.Error(), false
	}
	fail := func(reason string) (*planparse.ChangeSet, *runner.Job, applyqueue.State, string, bool) {
		tj.Close()
		return nil, nil, applyqueue.Failed, reason, false
	}
	if err := tj.Init(ctx); err != nil {
		return fail("terraform init of the merge commit failed: " + tj.Redact(err.Error()))
	}
	if _, err := tj.Plan(ctx); err != nil {
		return fail("terraform plan of the merge commit failed: " + tj.Redact(err.Error()))
	}
	shown, err := tj.Show(ctx)
	if err != nil {
		return fail("terraform show failed: " + tj.Redact(err.Error()))
	}
	current, err := planparse.ParseBytes(shown.JSON)
	if err != nil {
		return fail("terraform's plan of the merge commit could not be read: " + err.Error())
	}
	g := endstate.Compare(r.reviewed.ChangeSet, current, r.resuming)
	if !g.Equal {
		verdict := s.judgeUnreviewed(ctx, current)
		return fail("not applied: the merge commit's plan is not the reviewed one: " + strings.Join(g.Differences, "; ") +
			". Policy on the merge commit's plan: " + verdict + ". Plan the change again in a new pull request.")
	}
	// The same end state can still be denied on the merge commit: main may have
	// moved elsewhere in the stream (another group's count), or the live state
	// changed. The review's exceptions and attestations carry over, since the end
	// state is the reviewed one; a denied plan is never applied.
	if verdict, ok := r.judgeMerged(ctx, current); !ok {
		return fail("not applied: on the merge commit the policy denies the change: " + verdict)
	}
	r.audit.AppliedFingerprint = endstate.Fingerprint(current)
	return current, tj, "", "", true
}

// judgeMerged evaluates the merge commit's plan with the base branch's policy
// settings, live coordinator state, and the review's counted exception labels
// and still-fresh attestations.
func (r *applyRun) judgeMerged(ctx context.Context, current *planparse.ChangeSet) (string, bool) {
	s := r.s
	pol, err := s.policyFor(ctx, r.gh, r.job.Ref, "", r.job.MergeSHA)
	if err != nil {
		return "the base branch's policy could not be read: " + oneLine(err.Error()), false
	}
	var labels []policy.Label
	for _, e := range r.reviewed.Decision.ExceptionsApplied {
		labels = append(labels, policy.Label{Name: e.Label, Actor: e.Actor, Counted: true})
	}
	atts, err := s.rec.Attestations(ctx, r.job.Ref, r.job.ReviewedSHA)
	if err != nil {
		return "store: " + err.Error(), false
	}
	coordinator, live := s.liveState(ctx, current)
	dec, err := pol.engine.Evaluate(ctx, policy.Request{ChangeSet: current, Coordinator: coordinator, Live: live,
		Labels: dedupeLabels(labels), Attestations: atts, Config: pol.config, Now: s.now()})
	r.s.metrics.ObserveDecision("merge", dec)
	if err == nil && dec.Allowed {
		r.judged = judgedChanges(current, dec)
		return "", true
	}
	var parts []string
	for _, v := range dec.Violations {
		parts = append(parts, v.Rule+": "+v.Message)
	}
	return strings.Join(parts, "; "), false
}

func dedupeLabels(in []policy.Label) []policy.Label {
	seen := map[string]bool{}
	var out []policy.Label
	for _, l := range in {
		if !seen[l.Name] {
			seen[l.Name] = true
			out = append(out, l)
		}
	}
	return out
}

// judgeUnreviewed evaluates a plan no one reviewed: no labels, no attestations.
func (s *Server) judgeUnreviewed(ctx context.Context, cs *planparse.ChangeSet) string {
	coordinator, live := s.liveState(ctx, cs)
	dec, err := s.engine.Evaluate(ctx, policy.Request{ChangeSet: cs, Coordinator: coordinator, Live: live, Config: s.cfg.Policy, Now: s.now()})
	if err != nil {
		return "denied (the policy could not be evaluated: " + oneLine(err.Error()) + ")"
	}
	if dec.Allowed {
		return "it would be allowed, but it was not reviewed"
	}
	var rules []string
	for _, v := range dec.Violations {
		rules = append(rules, v.Rule)
	}
	return "denied (" + strings.Join(rules, ", ") + ")"
}

// applyJob prepares the terraform job of the merge commit, with the
// coordinator credentials of its coordinator URL as sensitive variables. It
// applies one instance at a time: every group of a stream triggers the same
// stream-wide scale, and parallel groups would race into 409
// ACTIVE_MIGRATION_EXISTS (coordinator.md §4).
func (s *Server) applyJob(checkout string, reviewed *records.Plan, env map[string]string, onLockWait func(runner.LockWait)) (*runner.Job, error) {
	if s.sandboxErr != nil {
		return nil, fmt.Errorf("not applied: this shardgate server cannot sandbox Terraform (%w) and does not run it unconfined", s.sandboxErr)
	}
	secret := serverconfig.RevealEnv(s.cfg.ApplyEnv)
	for _, st := range endstate.Streams(reviewed.ChangeSet) {
		coordinator, _ := planparse.SplitStreamKey(st)
		if creds, ok := s.cfg.CoordinatorFor(coordinator); ok && creds.Username != "" {
			secret[serverconfig.TFVarCoordinatorUsername] = creds.Username
			secret[serverconfig.TFVarCoordinatorPassword] = creds.Password.Reveal()
		}
	}
	dir := filepath.Join(checkout, filepath.FromSlash(reviewed.Dir))
	var varFiles []string
	for _, vf := range reviewed.VarFiles {
		varFiles = append(varFiles, filepath.Join(dir, filepath.FromSlash(vf)))
	}
	job, err := s.runner.NewJob(runner.JobConfig{Dir: dir, Root: checkout, Workspace: reviewed.Workspace, VarFiles: varFiles,
		Env: env, SecretEnv: secret, OnLockWait: onLockWait, Parallelism: 1})
	if err != nil {
		return nil, fmt.Errorf("prepare terraform for the merge commit: %w", err)
	}
	return job, nil
}

// apply runs terraform apply of the saved plan of the merge commit. A state
// lock held by someone else is reported with its holder and waited out; it is
// never broken.
func (r *applyRun) apply(ctx context.Context, tj *runner.Job, current *planparse.ChangeSet) (applyqueue.State, string, bool) {
	if len(endstate.Streams(current)) == 0 && len(current.OtherChanges) == 0 {
		r.audit.TerraformOutcome = "nothing to apply: the state already holds the reviewed change"
		return "", "", true
	}
	r.progress(ctx, applyqueue.Applying, "terraform apply of the merge commit's plan")
	err := tj.Apply(ctx)
	r.audit.RequestIDs = readRequestLog(r.requestLog)
	if err != nil {
		r.audit.TerraformOutcome = "failed"
		var stale *runner.StalePlanError
		if errors.As(err, &stale) {
			return applyqueue.Failed, "not applied: the Terraform state changed between plan and apply; retry with `/shardgate apply`", false
		}
		reason := "terraform apply failed: " + tj.Redact(err.Error())
		var af *runner.ApplyError
		if errors.As(err, &af) && strings.TrimSpace(af.Tail) != "" {
			reason += "\n" + tj.Redact(lastLines(af.Tail, 25))
		}
		return applyqueue.Failed, reason, false
	}
	r.audit.TerraformOutcome = "applied"
	return "", "", true
}

// converge waits until every stream the plan scaled is complete and safe.
func (r *applyRun) converge(ctx context.Context, current []planparse.Change) (applyqueue.State, string) {
	targets := endstate.ScaleTargets(current)
	if len(targets) == 0 {
		// Resumed after the apply: wait for the reviewed targets.
		targets = endstate.ScaleTargets(judgedChanges(r.reviewed.ChangeSet, r.reviewed.Decision))
	}
	start := r.s.now()
	var done []string
	for _, stream := range r.job.Streams {
		target, ok := targets[stream]
		if !ok {
			continue
		}
		coordinator, prefix := planparse.SplitStreamKey(stream)
		client, err := r.s.coordClient(coordinator)
		if err != nil {
			return applyqueue.Failed, "applied, but " + err.Error()
		}
		r.progress(ctx, applyqueue.Converging, fmt.Sprintf("waiting until stream `%s` is complete and safe at %d shards", prefix, target))
		wctx, cancel := context.WithTimeout(ctx, r.s.cfg.ConvergeTimeout)
		last := time.Time{}
		err = client.WaitConverged(wctx, prefix, target, func(st coord.ConvergenceStatus) {
			if time.Since(last) < r.s.progressEvery || st.Converged {
				return
			}
			last = time.Now()
			r.progress(ctx, applyqueue.Converging, fmt.Sprintf("stream `%s` → %d shards: %s", prefix, target, convergenceText(st)))
		})
		cancel()
		r.s.metrics.ObserveConvergence(err, r.s.now().Sub(start))
		if err != nil {
			if ctx.Err() != nil {
				return applyqueue.Converging, "interrupted"
			}
			var regressed *coord.MetadataRegressedError
			if errors.As(err, &regressed) {
				return applyqueue.Failed, fmt.Sprintf("applied, but stream %s's coordinator metadata went back while converging (%s): "+
					"Redis was probably restored from older data; stop admin changes to the stream and check the coordinator", prefix, oneLine(err.Error()))
			}
			return applyqueue.Failed, fmt.Sprintf("applied, but stream %s did not converge within %s: %s", prefix, r.s.cfg.ConvergeTimeout, oneLine(err.Error()))
		}
		done = append(done, fmt.Sprintf("`%s` at %d shards", prefix, target))
	}
	r.audit.ConvergenceSeconds = r.s.now().Sub(start).Seconds()
	if len(done) == 0 {
		return applyqueue.Applied, "applied; nothing to converge (no shard count changed)"
	}
	return applyqueue.Applied, fmt.Sprintf("applied and converged in %s: %s", r.s.now().Sub(start).Round(time.Second), strings.Join(done, ", "))
}

func convergenceText(st coord.ConvergenceStatus) string {
	var parts []string
	for _, g := range st.Groups {
		state := string(g.MigrationState)
		if state == "" {
			state = "no active migration"
		}
		parts = append(parts, fmt.Sprintf("%s: %s, routing %d, %s", g.ConsumerGroup, state, g.RoutingShardCount, g.GroupState))
	}
	return strings.Join(parts, "; ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
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
