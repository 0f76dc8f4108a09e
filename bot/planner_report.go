package bot

import (
	"context"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
)

// finishPlan stores a project's result and completes its check run.
func (s *Planner) finishPlan(ctx context.Context, gh ghapp.API, st *records.PRState, rec *records.Plan) error {
	conclusion, out := s.render.CheckOutput(rec)
	id, err := s.checks.Finish(ctx, gh, st.Ref, rec.CheckRunID, prreport.CheckPlanPrefix+rec.Project, rec.HeadSHA, conclusion, out)
	if err != nil {
		return err
	}
	rec.CheckRunID = id
	return s.rec.PutPlan(ctx, st.Ref, rec)
}

// publish saves the PR state and edits the comment to show it.
func (s *Planner) publish(ctx context.Context, gh ghapp.API, st *records.PRState, plans []*records.Plan) error {
	return s.publishWith(ctx, gh, st, plans, s.renderApplies(ctx, st))
}

// publishWith is publish with the comment's Apply section given.
func (s *Planner) publishWith(ctx context.Context, gh ghapp.API, st *records.PRState, plans []*records.Plan, applies string) error {
	if err := s.comments.Upsert(ctx, gh, st, s.render.Comment(st, s.sandboxNotice(), applies, plans)); err != nil {
		return err
	}
	st.LimitNotice, st.LimitShown = "", false // the comment shows Status again
	return s.rec.PutPR(ctx, st)
}

// renderComment is the PR's comment: its state, the applies, the plans.
func (s *Planner) renderComment(ctx context.Context, st *records.PRState, plans []*records.Plan) string {
	return s.render.Comment(st, s.sandboxNotice(), s.renderApplies(ctx, st), plans)
}

// reportConfigError fails the config check with the problem and blocks the
// pull request until .shardgate.yaml on the base branch is fixed.
func (s *Planner) reportConfigError(ctx context.Context, gh ghapp.API, st *records.PRState, err error) error {
	st.ConfigError = err.Error()
	st.Projects = nil
	st.Status = "blocked: the repository configuration is not valid."
	title := "Fix .shardgate.yaml on " + st.BaseRef
	summary := "shardgate reads `.shardgate.yaml` from the base branch " + report.Code(st.BaseRef) + ":\n\n" + report.CodeBlock(err.Error())
	if _, ferr := s.checks.Finish(ctx, gh, st.Ref, 0, prreport.CheckConfigName, st.HeadSHA, "failure",
		&ghapp.CheckOutput{Title: title, Summary: summary}); ferr != nil {
		return ferr
	}
	return s.publish(ctx, gh, st, nil)
}
