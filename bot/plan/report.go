package plan

import (
	"context"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
)

// FinishPlan stores a project's result and completes its check run.
// When the pull request's results fold into the aggregate check (folded),
// only the plan is stored.
func (s *Planner) FinishPlan(ctx context.Context, gh ghapp.API, st *records.PRState, rec *records.Plan) error {
	if s.folded(st) && rec.CheckRunID == 0 {
		return s.Records.PutPlan(ctx, st.Ref, rec)
	}
	conclusion, out := s.Render.CheckOutput(rec)
	id, err := s.Checks.Finish(ctx, gh, st.Ref, rec.CheckRunID, prreport.CheckPlanPrefix+rec.Project, rec.HeadSHA, conclusion, out)
	if err != nil {
		return err
	}
	rec.CheckRunID = id
	return s.Records.PutPlan(ctx, st.Ref, rec)
}

// Publish saves the PR state and edits the comment to show it.
func (s *Planner) Publish(ctx context.Context, gh ghapp.API, st *records.PRState, plans []*records.Plan) error {
	return s.publishWith(ctx, gh, st, plans, s.renderApplies(ctx, st))
}

// publishWith is Publish with the comment's Apply section given.
func (s *Planner) publishWith(ctx context.Context, gh ghapp.API, st *records.PRState, plans []*records.Plan, applies string) error {
	if err := s.Comments.Upsert(ctx, gh, st, s.Render.Comment(st, s.commentNotice(st), applies, plans)); err != nil {
		return err
	}
	st.LimitNotice, st.LimitShown = "", false // the comment shows Status again
	return s.Records.PutPR(ctx, st)
}

// RenderComment is the PR's comment: its state, the applies, the plans.
func (s *Planner) RenderComment(ctx context.Context, st *records.PRState, plans []*records.Plan) string {
	return s.Render.Comment(st, s.commentNotice(st), s.renderApplies(ctx, st), plans)
}

// reportConfigError fails the config check with the problem and blocks the
// pull request until .shardgate.yaml on the base branch is fixed.
func (s *Planner) reportConfigError(ctx context.Context, gh ghapp.API, st *records.PRState, err error) error {
	st.ConfigError = err.Error()
	st.Projects = nil
	st.Status = "blocked: the repository configuration is not valid."
	title := "Fix .shardgate.yaml on " + st.BaseRef
	summary := "shardgate reads `.shardgate.yaml` from the base branch " + report.Code(st.BaseRef) + ":\n\n" + report.CodeBlock(err.Error())
	if _, ferr := s.Checks.Finish(ctx, gh, st.Ref, 0, prreport.CheckConfigName, st.HeadSHA, "failure",
		&ghapp.CheckOutput{Title: title, Summary: summary}); ferr != nil {
		return ferr
	}
	if err := s.Publish(ctx, gh, st, nil); err != nil {
		return err
	}
	return s.finishGate(ctx, gh, st, 0, nil, "`.shardgate.yaml` on "+report.Code(st.BaseRef)+" is not valid: see the check `"+prreport.CheckConfigName+"`.")
}
