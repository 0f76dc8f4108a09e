package ghapp

import (
	"context"

	"github.com/google/go-github/v60/github"
)

var _ Checks = (*Client)(nil)

func (o *CheckOutput) github() *github.CheckRunOutput {
	if o == nil {
		return nil
	}
	out := &github.CheckRunOutput{Title: github.String(o.Title), Summary: github.String(o.Summary)}
	if o.Text != "" {
		out.Text = github.String(o.Text)
	}
	for _, a := range o.Annotations[:min(len(o.Annotations), MaxCheckAnnotations)] {
		out.Annotations = append(out.Annotations, &github.CheckRunAnnotation{Path: github.String(a.Path),
			StartLine: github.Int(a.StartLine), EndLine: github.Int(a.EndLine), AnnotationLevel: github.String(a.Level),
			Title: optional(a.Title), Message: github.String(a.Message)})
	}
	return out
}

// optional is nil for "", else a pointer to s.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func completedAt(run CheckRunUpdate) *github.Timestamp {
	if run.CompletedAt.IsZero() {
		return nil
	}
	return &github.Timestamp{Time: run.CompletedAt}
}

// CreateCheckRun implements Checks.
func (c *Client) CreateCheckRun(ctx context.Context, owner, repo string, run CheckRunUpdate) (int64, error) {
	cr, resp, err := c.gh.Checks.CreateCheckRun(ctx, owner, repo, github.CreateCheckRunOptions{
		Name: run.Name, HeadSHA: run.HeadSHA, Status: optional(run.Status), Conclusion: optional(run.Conclusion),
		CompletedAt: completedAt(run), Output: run.Output.github(), ExternalID: optional(run.ExternalID)})
	if err != nil {
		return 0, classify(resp, err)
	}
	return cr.GetID(), nil
}

// UpdateCheckRun implements Checks.
func (c *Client) UpdateCheckRun(ctx context.Context, owner, repo string, id int64, run CheckRunUpdate) error {
	_, resp, err := c.gh.Checks.UpdateCheckRun(ctx, owner, repo, id, github.UpdateCheckRunOptions{
		Name: run.Name, Status: optional(run.Status), Conclusion: optional(run.Conclusion),
		CompletedAt: completedAt(run), Output: run.Output.github(), ExternalID: optional(run.ExternalID)})
	return classify(resp, err)
}

// ListCheckRuns implements Checks.
func (c *Client) ListCheckRuns(ctx context.Context, owner, repo, sha, name string, appID int64, pg int) (Page[CheckRun], error) {
	opts := &github.ListCheckRunsOptions{CheckName: &name, Filter: github.String("all"), ListOptions: github.ListOptions{Page: pg, PerPage: perPage}}
	if appID > 0 {
		opts.AppID = &appID
	}
	res, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, owner, repo, sha, opts)
	if err != nil {
		return Page[CheckRun]{}, classify(resp, err)
	}
	out := make([]CheckRun, 0, len(res.CheckRuns))
	for _, cr := range res.CheckRuns {
		out = append(out, CheckRun{ID: cr.GetID(), ExternalID: cr.GetExternalID(), Status: cr.GetStatus()})
	}
	return page(out, resp), nil
}
