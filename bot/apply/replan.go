package apply

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/coord/endstate"
	"github.com/shardgate/shardgate/coord/traceability"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/planrun"
	"github.com/shardgate/shardgate/terraform/runner"
)

// replan plans the merge commit and compares it with the review.
func (r *applyRun) replan(ctx context.Context) (*planparse.ChangeSet, *runner.Job, applyqueue.State, string, bool) {
	s, job := r.s, r.job
	r.step(ctx, applyqueue.Planning, "re-planning the merge commit "+pullreq.ShortSHA(job.MergeSHA))
	checkout, cleanup, err := s.PR.Checkout(ctx, job.Ref, job.MergeSHA)
	for err != nil && r.waitForGitHub(ctx, err) {
		cleanup()
		checkout, cleanup, err = s.PR.Checkout(ctx, job.Ref, job.MergeSHA)
	}
	r.cleanup = cleanup
	if err != nil {
		return nil, nil, applyqueue.Failed, "fetch the merge commit: " + report.FirstLine(err.Error()), false
	}
	env := traceability.Env(filepath.Join(checkout, filepath.FromSlash(r.reviewed.Dir)), job.Ref, job.MergeSHA, job.MergedBy, job.Seq)
	brokerEnv, err := r.startBroker(ctx, r.stop)
	if err != nil {
		return nil, nil, applyqueue.Failed, err.Error(), false
	}
	maps.Copy(env, brokerEnv)
	tj, err := s.applyJob(job.Ref, checkout, r.reviewed, r.broker, env, r.live, func(w runner.LockWait) {
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
		if refusal, ok := r.brokerRefusal(); ok {
			return fail("not applied: the plan of the merge commit " + refusal)
		}
		return fail("terraform plan of the merge commit failed: " + tj.Redact(err.Error()))
	}
	if refusal, ok := r.brokerRefusal(); ok {
		return fail("not applied: the plan of the merge commit " + refusal)
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
	if reason, ok := r.groupGuard(ctx, current); !ok {
		return fail(reason)
	}
	// The same end state can still be denied on the merge commit: main may have
	// moved elsewhere in the stream (another group's count), or the live state
	// changed. The review's exceptions and attestations carry over, since the end
	// state is the reviewed one; a denied plan is never applied.
	if verdict, ok := r.judgeMerged(ctx, current); !ok {
		return fail("not applied: on the merge commit the policy denies the change: " + verdict)
	}
	r.audit.AppliedFingerprint = endstate.Fingerprint(current)
	if r.broker != nil {
		r.broker.Allow(brokerChanges(r.judged))
	}
	return current, tj, "", "", true
}

// groupGuard compares the merge commit's plan with what was judged for the
// merge group whose head it is (GitHub's merge queue lands a pull request as
// the head of its group): that group must have been allowed, and the whole
// commit's plan of the project must do what the group's did. The pull
// requests ahead in the group may have applied their part already, so a
// starting point already at the judged end state is accepted (as resuming
// is); the head-plan guard before it still holds this pull request to its
// own review. A merge commit no group was judged on is not compared.
func (r *applyRun) groupGuard(ctx context.Context, current *planparse.ChangeSet) (string, bool) {
	j, err := r.s.Records.GroupJudgement(ctx, r.job.Ref, r.job.MergeSHA)
	if err != nil {
		return "store: " + err.Error(), false
	}
	if j == nil {
		return "", true
	}
	group := "the merge group " + report.Code(pullreq.ShortSHA(r.job.MergeSHA)) + " that landed this pull request"
	again := " A change the queue landed against its judgement is not applied; plan the change again in a new pull request."
	judged := j.Plan(r.job.Project)
	switch {
	case !j.Allowed:
		return "not applied: " + group + " was refused by shardgate (`shardgate` ❌ on it)." + again, false
	case judged == nil || judged.ChangeSet == nil:
		return "not applied: " + group + " was judged without a plan of project " + report.Code(r.job.Project) + "." + again, false
	}
	if g := endstate.Compare(judged.ChangeSet, current, true); !g.Equal {
		return "not applied: the merge commit's plan is not what was judged for " + group + ": " + strings.Join(g.Differences, "; ") + "." + again, false
	}
	return "", true
}

// judgeMerged evaluates the merge commit's plan with the base branch's policy
// settings, live coordinator state, and the review's counted exception labels
// and still-fresh attestations.
func (r *applyRun) judgeMerged(ctx context.Context, current *planparse.ChangeSet) (string, bool) {
	s := r.s
	pol, err := s.Policies.For(ctx, r.gh, r.job.Ref, "", r.job.MergeSHA)
	if err != nil {
		return "the base branch's policy could not be read: " + report.FirstLine(err.Error()), false
	}
	var labels []policy.Label
	for _, e := range r.reviewed.Decision.ExceptionsApplied {
		labels = append(labels, policy.Label{Name: e.Label, Actor: e.Actor, Counted: true})
	}
	atts, err := s.Records.Attestations(ctx, r.job.Ref, r.job.ReviewedSHA)
	if err != nil {
		return "store: " + err.Error(), false
	}
	coordinator, live := s.Coords.Read(ctx, current)
	dec, err := pol.Engine.Evaluate(ctx, policy.Request{ChangeSet: current, Coordinator: coordinator, Live: live,
		Labels: dedupeLabels(labels), Attestations: atts, Config: pol.Config, Now: s.Now()})
	r.s.Metrics.ObserveDecision("merge", dec)
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
func (s *Applier) judgeUnreviewed(ctx context.Context, cs *planparse.ChangeSet) string {
	coordinator, live := s.Coords.Read(ctx, cs)
	dec, err := s.Engine.Evaluate(ctx, policy.Request{ChangeSet: cs, Coordinator: coordinator, Live: live, Config: s.Config.Policy, Now: s.Now()})
	if err != nil {
		return "denied (the policy could not be evaluated: " + report.FirstLine(err.Error()) + ")"
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

// applyJob prepares the terraform job of the merge commit. Terraform gets a
// placeholder for the coordinator credentials (modules declare them without
// defaults); the job's broker adds the real ones (broker.go). It
// applies one instance at a time: every group of a stream triggers the same
// stream-wide scale, and parallel groups would race into 409
// ACTIVE_MIGRATION_EXISTS (coordinator.md §4).
func (s *Applier) applyJob(ref pullreq.Ref, checkout string, reviewed *records.Plan, broker *coordbroker.Broker, env map[string]string, out io.Writer, onLockWait func(runner.LockWait)) (*runner.Job, error) {
	if s.SandboxErr != nil {
		return nil, fmt.Errorf("not applied: this shardgate server cannot sandbox Terraform (%w) and does not run it unconfined", s.SandboxErr)
	}
	secret := serverconfig.RevealEnv(s.Config.ApplyEnv)
	for _, st := range endstate.Streams(reviewed.ChangeSet) {
		coordinator, _ := planparse.SplitStreamKey(st)
		if _, ok := s.Config.CoordinatorFor(coordinator); ok {
			secret[serverconfig.TFVarCoordinatorUsername] = coordbroker.PlaceholderCredential
			secret[serverconfig.TFVarCoordinatorPassword] = coordbroker.PlaceholderCredential
		}
	}
	var ports []int
	if broker != nil {
		ports = []int{broker.Port()}
	}
	writable, err := s.Config.ProjectWritable(ref.Owner, ref.Repo, reviewed.Project)
	if err != nil {
		return nil, err
	}
	cfg := runner.JobConfig{Dir: filepath.Join(checkout, filepath.FromSlash(reviewed.Dir)), Root: checkout, Workspace: reviewed.Workspace,
		SecretEnv: secret, ConnectPorts: ports, OnLockWait: onLockWait, Parallelism: 1, Output: out, ReadWrite: writable}
	if err := planrun.ProjectJob(&cfg, reviewed.VarFiles, reviewed.Keys, env, os.LookupEnv); err != nil {
		return nil, fmt.Errorf("prepare terraform for the merge commit: %w", err)
	}
	r := s.Runner
	if s.Binaries != nil && reviewed.TerraformPath != "" {
		b, ok := s.Binaries.ByPath(reviewed.TerraformPath)
		if !ok {
			return nil, fmt.Errorf("not applied: the plan ran %s, which this shardgate server no longer has (terraform.binary, terraform.binaries)", reviewed.TerraformPath)
		}
		r = b.Runner
	}
	job, err := r.NewJob(cfg)
	if err != nil {
		return nil, fmt.Errorf("prepare terraform for the merge commit: %w", err)
	}
	return job, nil
}
