package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shardgate/shardgate/coord/endstate"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/policy/repopolicy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// whyManual is why a project with `apply: manual` waits after its merge.
const whyManual = "`apply: manual` in `.shardgate.yaml`: shardgate does not apply it on merge."

// EnqueueApplies turns a merge into one apply job per project whose reviewed
// plan changes anything (coordinator or not), in merge order, but for the
// projects the base branch's .shardgate.yaml applies by hand: those are
// listed in st.Waiting. A redelivered merge adds nothing.
func (s *Applier) EnqueueApplies(ctx context.Context, gh ghapp.API, st *records.PRState, pr ghapp.PullRequest) error {
	if def := pr.DefaultBranch; def != "" && pr.BaseRef != def {
		st.Status = fmt.Sprintf("merged into `%s`, not the default branch `%s`: shardgate applies merges into the default branch only.", pr.BaseRef, def)
		return nil
	}
	reviewed := pr.HeadSHA
	plans, err := s.Records.Plans(ctx, st.Ref, reviewed)
	if err != nil {
		return err
	}
	existing, err := s.Applies.ListForPR(ctx, st.Ref)
	if err != nil {
		return err
	}
	modes, whyNot, err := applyModes(ctx, gh, st, pr)
	if err != nil {
		return err // GitHub's: the merge event is handled again
	}
	queued := 0
	st.Waiting = nil
	for _, p := range applyOrder(modes, records.OrderPlans(plans, st.Projects)) {
		if !ChangesAnything(p.ChangeSet) {
			continue
		}
		if whyNot != "" || modes.ApplyModeOf(p.Project) == repoconfig.ApplyManual {
			why := whyManual
			if whyNot != "" {
				why = whyNot
			}
			st.Waiting = append(st.Waiting, records.WaitingApply{Project: p.Project, Why: why})
			continue
		}
		if hasApply(existing, p.Project, pr.MergeSHA) {
			continue
		}
		if ok, err := s.enqueueApply(ctx, st.Ref, p, pr, "", modes.DependenciesOf(p.Project)); err != nil {
			return err
		} else if ok {
			queued++
		}
	}
	switch {
	case len(plans) == 0:
		st.Status = "merged, but shardgate never planned the merged head commit: nothing to apply."
	case queued == 0 && len(existing) == 0 && len(st.Waiting) > 0:
		st.Status = fmt.Sprintf("merged by %s; nothing applied on merge: %s for `/shardgate apply <project>` (see Apply below).",
			pr.MergedBy, waitingProjects(len(st.Waiting)))
	case queued == 0 && len(existing) == 0:
		st.Status = "merged; no changes to apply."
	default:
		st.Status = fmt.Sprintf("merged by %s; applying in merge order, one stream and one Terraform state at a time.", pr.MergedBy)
	}
	s.Scheduler.Notify()
	return nil
}

// EnqueueApply queues the apply of one reviewed plan of a merged pull
// request, asked for by an approver's command (requestedBy) or by the merge
// (""); false when the queue already holds it (a redelivered merge event, a
// repeated command).
func (s *Applier) EnqueueApply(ctx context.Context, ref pullreq.Ref, p *records.Plan, pr ghapp.PullRequest, requestedBy string) (bool, error) {
	return s.enqueueApply(ctx, ref, p, pr, requestedBy, nil)
}

// enqueueApply is EnqueueApply of a job that waits until the merge's applies
// of the projects after have succeeded (depends_on).
func (s *Applier) enqueueApply(ctx context.Context, ref pullreq.Ref, p *records.Plan, pr ghapp.PullRequest, requestedBy string, after []string) (bool, error) {
	job := &applyqueue.Job{Ref: ref, Project: p.Project, Streams: endstate.Streams(p.ChangeSet), StateKey: stateKey(ref, p),
		ReviewedSHA: pr.HeadSHA, Sensitive: p.ChangeSet.SensitiveValues(), MergeSHA: pr.MergeSHA, MergedBy: pr.MergedBy,
		RequestedBy: requestedBy, After: after}
	if err := s.Applies.Enqueue(ctx, job); errors.Is(err, applyqueue.ErrApplyExists) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

// applyModes reads when each project is applied from the .shardgate.yaml of
// the base branch the pull request was merged into, as its plans were: a pull
// request cannot make its own project apply on merge. When the file is not
// valid, nothing is applied on merge; whyNot says why.
func applyModes(ctx context.Context, gh ghapp.API, st *records.PRState, pr ghapp.PullRequest) (cfg *repoconfig.Config, whyNot string, err error) {
	cfg, err = repopolicy.Config(ctx, gh, st.Ref, pr.BaseRef, pr.BaseSHA)
	var cfgErr *repoconfig.Error
	switch {
	case errors.As(err, &cfgErr):
		return repoconfig.Default(), "the base branch's `.shardgate.yaml` is not valid (" + report.Escape(report.FirstLine(err.Error())) +
			"), so shardgate did not apply it on merge.", nil
	case err != nil:
		return nil, "", err
	}
	return cfg, "", nil
}

// stateKey names the Terraform state a plan's project applies to: its
// repository, directory and workspace, and the init arguments and backend
// settings that tell several states of one directory apart. Two applies of
// it never run at once.
func stateKey(ref pullreq.Ref, p *records.Plan) string {
	key := strings.ToLower(ref.FullName()) + ":" + p.Dir + "@" + p.Workspace
	for _, a := range p.Keys.InitArgs {
		key += " " + a
	}
	for _, k := range slices.Sorted(maps.Keys(p.Keys.BackendConfigEnv)) {
		key += " " + k + "=$" + p.Keys.BackendConfigEnv[k]
	}
	return key
}

// ChangesAnything says whether a plan changes the coordinator or any other
// resource: a plan that does is applied after its merge.
func ChangesAnything(cs *planparse.ChangeSet) bool {
	return cs != nil && (len(endstate.Streams(cs)) > 0 || len(cs.OtherChanges) > 0)
}

func waitingProjects(n int) string {
	if n == 1 {
		return "1 project waits"
	}
	return fmt.Sprintf("%d projects wait", n)
}

func hasApply(jobs []*applyqueue.Job, project, mergeSHA string) bool {
	for _, j := range jobs {
		if j.Project == project && j.MergeSHA == mergeSHA {
			return true
		}
	}
	return false
}

// applyOrder orders a merge's plans so that each project's dependencies
// (depends_on) are queued before it: a dependent never holds a lock its
// dependency waits for.
func applyOrder(cfg *repoconfig.Config, plans []*records.Plan) []*records.Plan {
	byName := map[string]*records.Plan{}
	names := make([]string, 0, len(plans))
	for _, p := range plans {
		byName[p.Project] = p
		names = append(names, p.Project)
	}
	out := make([]*records.Plan, 0, len(plans))
	for _, n := range cfg.ApplyOrder(names) {
		out = append(out, byName[n])
	}
	return out
}
