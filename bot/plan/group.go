package plan

import (
	"cmp"
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/policy/repopolicy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Group is a merge group of GitHub's merge queue, as its merge_group event
// names it: the commit the queue will land (HeadSHA, on the branch HeadRef,
// gh-readonly-queue/<base>/pr-<N>-<sha>) and its parent (BaseSHA: the base
// branch, or the head of the group ahead of it in the queue).
type Group struct {
	Installation     int64
	Owner, Repo      string
	HeadSHA, HeadRef string
	BaseSHA, BaseRef string
	// DefaultBranch is the repository's ("" when not known: then every
	// project's branches match).
	DefaultBranch string
}

// ref names the group's repository; Number 0 is no pull request.
func (g Group) ref() pullreq.Ref {
	return pullreq.Ref{Installation: g.Installation, Owner: g.Owner, Repo: g.Repo}
}

// branch is the base branch's name.
func (g Group) branch() string { return strings.TrimPrefix(g.BaseRef, "refs/heads/") }

// destroyedKey records that the group is gone from the queue.
func (g Group) destroyedKey() string {
	return g.ref().Key() + "/merge-group-destroyed/" + g.HeadSHA
}

// queuePR is the pull request a merge group's head ref names:
// refs/heads/gh-readonly-queue/<branch>/pr-<N>-<sha>.
var queuePR = regexp.MustCompile(`/pr-([0-9]+)-[0-9a-f]+$`)

// groupJobs are the merge-group plans running in this process, by head, so
// a destroyed group cancels its own.
type groupJobs struct {
	mu      sync.Mutex
	running map[string]context.CancelFunc
}

func (j *groupJobs) add(sha string, cancel context.CancelFunc) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.running == nil {
		j.running = map[string]context.CancelFunc{}
	}
	j.running[sha] = cancel
}

func (j *groupJobs) done(sha string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.running, sha)
}

func (j *groupJobs) cancel(sha string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if cancel := j.running[sha]; cancel != nil {
		cancel()
	}
}

// PlanGroup plans and judges a merge group's head commit for every project
// the group changes relative to its base, with the exception labels and
// attestations valid on the pull requests it lands (its own, and those of
// the groups ahead of it, whose changes its head holds), and reports
// `shardgate/plan: <project>` and `shardgate` on the head (above
// report.max_project_checks, `shardgate` only, a row for each project). Its
// projects are planned in parallel, as a pull request's are. It is a preview:
// it starts no apply (its judgement is kept only for the guard of the applies
// the queue's merges start), and each pull request's comment only gains
// the line saying how the queue's commit was judged. A group dequeued
// (DestroyGroup) before or while it runs reports nothing more.
func (s *Planner) PlanGroup(ctx context.Context, g Group) error {
	if gone, err := s.Records.Handled(ctx, g.destroyedKey()); err != nil || gone {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.groups.add(g.HeadSHA, cancel)
	defer s.groups.done(g.HeadSHA)
	err := s.planGroup(ctx, g)
	if err != nil {
		// Dequeued meanwhile (here, or through another process): what this
		// job left in progress is cancelled, and nothing is retried.
		bg := context.WithoutCancel(ctx)
		if gone, herr := s.Records.Handled(bg, g.destroyedKey()); herr == nil && gone {
			logctx.Logger(ctx).WithField(logctx.FieldSHA, g.HeadSHA).Info("merge group dequeued while it was planned; stopped")
			return s.cancelGroupChecks(bg, g, "destroyed")
		}
	}
	return err
}

// errGroupGone stops the plan of a group that was dequeued.
var errGroupGone = errors.New("the merge group is gone from the queue")

func (s *Planner) planGroup(ctx context.Context, g Group) error {
	gh, err := ghapp.APIFor(s.Clients, g.Installation)
	if err != nil {
		return err
	}
	ref := g.ref()
	gateID, err := s.Checks.StartPreview(ctx, gh, ref, prreport.CheckGateName, g.HeadSHA)
	if err != nil {
		return err
	}
	gate := prreport.Gate{Subject: "this merge group"}
	if s.SandboxErr != nil {
		gate.Refused = sandboxRefusedStatus(s.SandboxErr)
		return s.finishGroupGate(ctx, gh, g, gateID, gate)
	}
	// The configuration of the base branch as it is, never of a commit of
	// the queue: a queued pull request does not loosen the policy of those
	// behind it.
	pol, err := s.Policies.For(ctx, gh, ref, g.branch(), "")
	var cfgErr *repoconfig.Error
	if errors.As(err, &cfgErr) {
		gate.Refused = "`.shardgate.yaml` on " + report.Code(g.branch()) + " is not valid:\n\n" + report.CodeBlock(err.Error())
		return s.finishGroupGate(ctx, gh, g, gateID, gate)
	}
	if err != nil {
		return err
	}
	files, _, err := compareGroup(ctx, gh, g, g.BaseSHA)
	if err != nil {
		return err
	}
	// The head holds the groups ahead too (none of it applied yet): what was
	// given on their pull requests counts as well.
	_, commits, err := compareGroup(ctx, gh, g, g.branch())
	if err != nil {
		return err
	}
	prs, err := s.groupPRs(ctx, gh, g, commits)
	if err != nil {
		return err
	}
	labels, atts, err := s.groupApprovals(ctx, gh, prs)
	if err != nil {
		return err
	}
	ch := repoconfig.Change{Files: files, Base: g.branch(), DefaultBranch: g.DefaultBranch}
	tree := s.groupTree(ctx, g)
	defer tree.remove()
	if projects := selectProjects(pol.Repo, ch, tree.root); len(projects) > 0 {
		if gate.Plans, err = s.planGroupProjects(ctx, gh, g, tree, pol, projects, labels, atts); err != nil {
			return err
		}
	}
	if err := s.finishGroupGate(ctx, gh, g, gateID, gate); err != nil {
		return err
	}
	return s.noteQueueVerdict(ctx, gh, g, prs, gate)
}

// groupTree is the group's head, checked out when first asked (for the
// module graph, or for the plans) and then kept for both.
func (s *Planner) groupTree(ctx context.Context, g Group) *headTree {
	return &headTree{fetch: func() (string, []ghapp.SkippedLink, func(), error) {
		return s.Checkouts.Tree(ctx, g.ref(), g.HeadSHA)
	}}
}

// planGroupProjects plans the projects on the group's head, spread over the
// server's plan slots as a pull request's are (spread), judges them together
// and then each, and reports each on its check run: created when its plan
// starts and completed once judged, or, above report.max_project_checks, none
// (the aggregate check run holds their results: finishGroupGate).
func (s *Planner) planGroupProjects(ctx context.Context, gh ghapp.API, g Group, tree *headTree, pol *repopolicy.Policy, projects []repoconfig.Project,
	labels []policy.Label, atts []policy.Attestation) ([]*records.Plan, error) {
	ref := g.ref()
	checkout, skipped, coErr := tree.get()
	plans := newPlans(projects, g.HeadSHA, skipped, coErr, "merge group")
	folded := s.folds(len(projects))
	err := s.spread(ctx, projects, func(ctx context.Context, i int) error {
		if gone, err := s.Records.Handled(ctx, g.destroyedKey()); err != nil || gone {
			return cmp.Or(err, errGroupGone)
		}
		rec := plans[i]
		if !folded {
			id, err := s.Checks.StartPreview(ctx, gh, ref, prreport.CheckPlanPrefix+rec.Project, g.HeadSHA)
			if err != nil {
				return err
			}
			rec.CheckRunID = id
		}
		if rec.Error == "" {
			if err := s.planInSlot(ctx, ref, rec, checkout, projects[i], func(runner.LockWait) {}); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	if coErr == nil {
		if _, err := s.judgeTogether(ctx, ref, g.HeadSHA, checkout, pol.Repo, plans); err != nil {
			return nil, err
		}
	}
	for _, rec := range plans {
		if rec.ChangeSet != nil {
			s.judge(ctx, rec, pol, labels, atts)
		}
		rec.PlannedAt = s.Now().UTC()
		if folded {
			continue
		}
		conclusion, out := s.Render.CheckOutput(rec)
		if _, err := s.Checks.Finish(ctx, gh, ref, rec.CheckRunID, prreport.CheckPlanPrefix+rec.Project, g.HeadSHA, conclusion, out); err != nil {
			return nil, err
		}
	}
	return plans, nil
}

// finishGroupGate keeps how the group's head was judged (the apply of a pull
// request whose merge commit it is compares with it) and completes the
// aggregate check on it: above report.max_project_checks, with a row (and,
// unless allowed, an annotation) for each project.
func (s *Planner) finishGroupGate(ctx context.Context, gh ghapp.API, g Group, id int64, gate prreport.Gate) error {
	judged := &records.GroupJudgement{HeadSHA: g.HeadSHA, Allowed: gate.Allowed(), Plans: gate.Plans}
	if err := s.Records.PutGroupJudgement(ctx, g.ref(), judged); err != nil {
		return err
	}
	conclusion, out := s.gateOutput(len(gate.Plans), gate)
	_, err := s.Checks.Finish(ctx, gh, g.ref(), id, prreport.CheckGateName, g.HeadSHA, conclusion, out)
	return err
}

// maxGroupCommits bounds the commits of a group whose pull requests are
// looked up (one call each).
const maxGroupCommits = 100

// queueNotePrefix starts the line a pull request's comment gains for the
// merge group that holds it.
const queueNotePrefix = "in the merge queue: judged "

// DestroyGroup is a group gone from the queue (merged, invalidated,
// dequeued): its plan stops or never starts, and the checks it left in
// progress on its head are completed as cancelled.
func (s *Planner) DestroyGroup(ctx context.Context, g Group, reason string) error {
	if err := s.Records.MarkHandled(ctx, g.destroyedKey(), s.Now()); err != nil {
		return err
	}
	s.groups.cancel(g.HeadSHA)
	return s.cancelGroupChecks(ctx, g, reason)
}

// cancelGroupChecks completes the checks left in progress on a group's head
// as cancelled.
func (s *Planner) cancelGroupChecks(ctx context.Context, g Group, reason string) error {
	return s.finishGroupChecks(ctx, g, "cancelled", &ghapp.CheckOutput{Title: "Cancelled: the merge group is gone",
		Summary: "GitHub destroyed this merge group (" + report.Code(reason) + ") before shardgate finished judging it."})
}

// FailGroup completes the checks a group's plan left in progress as failed:
// its job failed for good (why), and the queue must not wait on them.
func (s *Planner) FailGroup(ctx context.Context, g Group, why string) error {
	return s.finishGroupChecks(ctx, g, "failure", &ghapp.CheckOutput{Title: "shardgate could not finish judging this merge group",
		Summary: "shardgate could not finish judging this merge group: " + report.Code(report.FirstLine(why)) +
			"\n\nRemove the pull request from the queue and add it again to try again."})
}

// finishGroupChecks completes the checks left in progress on a group's head.
func (s *Planner) finishGroupChecks(ctx context.Context, g Group, conclusion string, out *ghapp.CheckOutput) error {
	gh, err := ghapp.APIFor(s.Clients, g.Installation)
	if err != nil {
		return err
	}
	open, _, err := s.Checks.ListOpen(ctx, nil)
	if err != nil {
		return err
	}
	for _, oc := range open {
		if oc.SHA != g.HeadSHA || oc.Ref.Owner != g.Owner || oc.Ref.Repo != g.Repo {
			continue
		}
		id := oc.ID
		if id == 0 {
			if id, err = s.Checks.Find(ctx, gh, oc.Ref, oc.Name, oc.SHA, true); err != nil {
				return err
			}
		}
		if id == 0 {
			if err := s.Checks.Forget(ctx, oc.Key); err != nil {
				return err
			}
			continue
		}
		if _, err := s.Checks.Finish(ctx, gh, oc.Ref, id, oc.Name, oc.SHA, conclusion, out); err != nil {
			return err
		}
	}
	return nil
}
