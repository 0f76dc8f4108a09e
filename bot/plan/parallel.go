package plan

import (
	"context"
	"fmt"
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

// planSlots bound the terraform runs of the plans of pull requests and merge
// groups in this process at queue.workers, however many jobs plan at once:
// a job's projects are spread over the slots, and two jobs share them.
type planSlots struct {
	once sync.Once
	ch   chan struct{}
}

// acquire waits for a slot of n (the first call sizes them).
func (p *planSlots) acquire(ctx context.Context, n int) (release func(), err error) {
	p.once.Do(func() { p.ch = make(chan struct{}, max(n, 1)) })
	select {
	case p.ch <- struct{}{}:
		return func() { <-p.ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// prPlan is one job's plan of a pull request's projects as they run in
// parallel: mu guards the PR state, its record and the finished plans.
type prPlan struct {
	gh     ghapp.API
	st     *records.PRState
	pol    *repopolicy.Policy
	labels []policy.Label
	atts   []policy.Attestation
	tree   string

	mu   sync.Mutex
	done []*records.Plan
}

// planAll plans each of the projects once, their terraform runs spread over
// the server's plan slots (queue.workers; spread). The labels and
// attestations are read once for all of them; a change to either re-judges
// the stored plans after this job (Reevaluate). plans[i] describes
// projects[i]; a project the checkout cannot plan says why.
func (s *Planner) planAll(ctx context.Context, gh ghapp.API, st *records.PRState, pol *repopolicy.Policy, checkout string,
	skipped []ghapp.SkippedLink, coErr error, projects []repoconfig.Project) ([]*records.Plan, error) {
	labels, err := s.Labels.Judge(ctx, gh, st)
	if err != nil {
		return nil, err
	}
	atts, err := s.Records.Attestations(ctx, st.Ref, st.HeadSHA)
	if err != nil {
		return nil, err
	}
	job := &prPlan{gh: gh, st: st, pol: pol, labels: labels, atts: atts, tree: checkout}
	plans := newPlans(projects, st.HeadSHA, skipped, coErr, "pull request")
	if err := s.spread(ctx, projects, func(ctx context.Context, i int) error {
		return s.planOne(ctx, job, plans[i], projects[i])
	}); err != nil {
		return nil, err
	}
	return plans, nil
}

// newPlans are the records of the projects' plans at sha, each saying why
// it cannot be planned when the checkout of the subject's ("pull request",
// "merge group") files failed or left out links it needs.
func newPlans(projects []repoconfig.Project, sha string, skipped []ghapp.SkippedLink, coErr error, subject string) []*records.Plan {
	plans := make([]*records.Plan, len(projects))
	for i, p := range projects {
		rec := &records.Plan{Project: p.Name, Dir: p.Dir, Workspace: p.Workspace, VarFiles: p.VarFiles, Keys: p.ProjectKeys, HeadSHA: sha,
			LockWaits: []report.LockWait{}, SkippedLinks: linkNames(skipped)}
		if coErr != nil {
			rec.Error = "the " + subject + "'s files could not be fetched: " + report.FirstLine(errText(coErr))
		} else if needed := linksNeeded(skipped, p); len(needed) > 0 {
			rec.Error = linksError(needed)
		}
		plans[i] = rec
	}
	return plans
}

// spread does each project's work once (work(ctx, i) for projects[i]) over
// queue.workers workers. Projects of one directory share its files (its
// lock file, a local state's lock): they run one after another in one
// worker. The first error stops what has not started and is returned, as is
// ctx's end.
func (s *Planner) spread(ctx context.Context, projects []repoconfig.Project, work func(ctx context.Context, i int) error) error {
	if len(projects) == 0 {
		return nil
	}
	var groups [][]int
	byDir := map[string]int{}
	for i, p := range projects {
		g, ok := byDir[p.Dir]
		if !ok {
			g = len(groups)
			byDir[p.Dir] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan []int)
	var wg sync.WaitGroup
	for range min(max(s.Config.Workers, 1), len(groups)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range next {
				for _, i := range g {
					if ctx.Err() != nil {
						continue
					}
					if err := work(ctx, i); err != nil {
						cancel(err)
					}
				}
			}
		}()
	}
feed:
	for _, g := range groups {
		select {
		case next <- g:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// planInSlot plans one project (runProject) once one of the server's plan
// slots is free: the terraform runs of all the plans in this process, pull
// requests' and merge groups', take at most queue.workers slots at once.
func (s *Planner) planInSlot(ctx context.Context, ref pullreq.Ref, rec *records.Plan, checkout string, p repoconfig.Project,
	onLockWait func(runner.LockWait)) error {
	release, err := s.slots.acquire(ctx, s.Config.Workers)
	if err != nil {
		return err
	}
	defer release()
	s.runProject(ctx, ref, rec, checkout, p, onLockWait)
	return nil
}

// planOne plans one project (unless rec already says why not), judges the
// plan and shows it on its check run, or keeps it for the aggregate check
// when the pull request's results fold there. The comment shows every
// project's plan once they are all done (one edit per job: each is a write
// GitHub's secondary limits count).
func (s *Planner) planOne(ctx context.Context, job *prPlan, rec *records.Plan, p repoconfig.Project) (err error) {
	st := job.st
	if !s.folded(st) {
		if rec.CheckRunID, err = s.Checks.Start(ctx, job.gh, st.Ref, prreport.CheckPlanPrefix+p.Name, st.HeadSHA); err != nil {
			return err
		}
	}
	if rec.Error == "" {
		if err := s.planInSlot(ctx, st.Ref, rec, job.tree, p, func(w runner.LockWait) { s.showLockWait(ctx, job, p, w) }); err != nil {
			return err
		}
	}
	if rec.ChangeSet != nil {
		s.judge(ctx, rec, job.pol, job.labels, job.atts)
	}
	rec.PlannedAt = s.Now().UTC()
	if awaitsPeers(rec) {
		// Judged again with the commit's other projects once all are planned
		// (judgeTogether): its check run is completed then, once, with that
		// verdict. Completed now, it could pass a required check it fails.
		err = s.Records.PutPlan(ctx, st.Ref, rec)
	} else {
		err = s.FinishPlan(ctx, job.gh, st, rec)
	}
	if err != nil {
		return err
	}
	job.mu.Lock()
	defer job.mu.Unlock()
	job.done = append(job.done, rec)
	return s.Records.PutPR(ctx, st)
}

// showLockWait tells the PR that a project waits for its state lock, with
// the plans finished so far.
func (s *Planner) showLockWait(ctx context.Context, job *prPlan, p repoconfig.Project, w runner.LockWait) {
	job.mu.Lock()
	defer job.mu.Unlock()
	st := job.st
	st.Status = fmt.Sprintf("planning `%s`: project `%s` is waiting for the Terraform state lock held by %s; shardgate waits and never force-unlocks.",
		pullreq.ShortSHA(st.HeadSHA), p.Name, w.Lock.Holder())
	if err := s.Publish(ctx, job.gh, st, records.OrderPlans(job.done, st.Projects)); err != nil {
		logctx.Logger(ctx).WithError(err).Warn("could not report a state lock wait")
	}
}
