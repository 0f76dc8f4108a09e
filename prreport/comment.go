package bot

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/pullreq"
	"github.com/shardgate/shardgate/records"
	"github.com/shardgate/shardgate/report"
)

// CommentMarker is the hidden first line of shardgate's one comment per PR.
const CommentMarker = "<!-- shardgate -->"

// Check run name prefixes; the project name follows.
const (
	CheckPlanPrefix  = "shardgate/plan: "
	CheckApplyPrefix = "shardgate/apply: "
	// CheckConfigName is the check of a bad .shardgate.yaml.
	CheckConfigName = "shardgate/plan: configuration"
	// maxCheckText is GitHub's limit on a check run's output summary and text.
	maxCheckText = 65535
)

// renderComment builds the living comment: marker, head, status, notes, then one
// section per project, all under GitHub's limit.
func (s *Planner) renderComment(ctx context.Context, st *records.PRState, plans []*records.Plan) string {
	var b strings.Builder
	b.WriteString(CommentMarker + "\n")
	fmt.Fprintf(&b, "## shardgate\n\n**Head** `%s` · **Status:** %s\n", shortSHA(st.HeadSHA), st.Status)
	if n := s.sandboxNotice(); n != "" {
		b.WriteString("\n" + n + "\n")
	}
	for _, n := range st.Notes {
		fmt.Fprintf(&b, "\n> %s\n", n) // built escaped (approval.Labels.VoidExceptions)
	}
	if st.ConfigError != "" {
		fmt.Fprintf(&b, "\n### ❌ `.shardgate.yaml` on the base branch is not valid\n\nFix it on %s (shardgate reads its configuration from the base branch, never from the pull request):\n\n%s",
			report.Code(st.BaseRef), report.CodeBlock(st.ConfigError))
	}
	head := b.String()
	applies := s.renderApplies(ctx, st.Ref)
	budget := max(1, (report.MaxCommentChars-len(head)-len(applies)-200)/max(1, len(plans)))
	b.WriteString(applies)
	for _, p := range plans {
		b.WriteString("\n")
		b.WriteString(s.renderProject(p, budget))
	}
	out := b.String()
	if len(out) > report.MaxCommentChars {
		out = out[:report.MaxCommentChars-100] + "\n\n_…cut to fit GitHub's comment limit._\n"
	}
	return out
}

func (s *Planner) renderProject(p *records.Plan, budget int) string {
	if !p.PlannedAt.IsZero() {
		// Judged: shown as it is stored, without what a plan copied from a
		// secret. (upsertComment redacts the whole body in any case.)
		s.redact.Scrub(p)
	}
	if p.Error != "" {
		return report.NotPlannedWithDiagnostics(p.Project, p.Error, p.Diagnostics, true, budget)
	}
	rep := s.report(p)
	return rep.Markdown(budget)
}

func (s *Planner) report(p *records.Plan) *report.Report {
	return &report.Report{Project: p.Project, ChangeSet: p.ChangeSet, Decision: p.Decision, Rules: s.rules,
		Coordinator: p.Coordinator, Approvers: s.approvers.Text(), LockWaits: p.LockWaits}
}

// upsertComment edits shardgate's comment on the PR in place, creating it the
// first time. The comment is found by id, else by its marker among the PR's
// comments written by a bot, so a lost id — or a creation whose answer was
// lost, retried with its job — never leads to a second comment. The body is
// redacted.
func (s *Planner) upsertComment(ctx context.Context, gh ghapp.Comments, st *records.PRState, body string) error {
	body = s.redact.Redact(body)
	ref := st.Ref
	if st.CommentID != 0 {
		err := gh.EditComment(ctx, ref.Owner, ref.Repo, st.CommentID, body)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ghapp.ErrNotFound) {
			return fmt.Errorf("edit comment on %s: %w", ref, err)
		}
		st.CommentID = 0 // deleted by someone: find or create again
	}
	id, err := findComment(ctx, gh, ref)
	if err != nil {
		return err
	}
	if id != 0 {
		if err := gh.EditComment(ctx, ref.Owner, ref.Repo, id, body); err != nil {
			return fmt.Errorf("edit comment on %s: %w", ref, err)
		}
		st.CommentID = id
		return nil
	}
	id, err = gh.CreateComment(ctx, ref.Owner, ref.Repo, ref.Number, body)
	if err != nil {
		return fmt.Errorf("create comment on %s: %w", ref, err)
	}
	st.CommentID = id
	return nil
}

// reply answers a command comment once. The reply starts with a hidden marker
// naming the comment and the answer, so a job retried after a creation whose
// answer was lost finds its reply instead of posting it again. The body is
// redacted.
func (s *Planner) reply(ctx context.Context, gh ghapp.Comments, ref pullreq.Ref, commentID int64, text string) error {
	sum := sha256.Sum256([]byte(text))
	marker := fmt.Sprintf("<!-- shardgate:reply %d %x -->", commentID, sum[:8])
	id, err := findMarked(ctx, gh, ref, marker)
	if err != nil || id != 0 {
		return err
	}
	body := s.redact.Redact(marker + "\n" + text)
	if _, err := gh.CreateComment(ctx, ref.Owner, ref.Repo, ref.Number, body); err != nil {
		return fmt.Errorf("reply on %s: %w", ref, err)
	}
	return nil
}

func findComment(ctx context.Context, gh ghapp.Comments, ref pullreq.Ref) (int64, error) {
	return findMarked(ctx, gh, ref, CommentMarker)
}

// findMarked returns the first comment of a bot on the PR that starts with
// marker; 0 when there is none.
func findMarked(ctx context.Context, gh ghapp.Comments, ref pullreq.Ref, marker string) (int64, error) {
	page := 0
	for read := 0; read < 50; read++ {
		comments, err := gh.ListComments(ctx, ref.Owner, ref.Repo, ref.Number, page)
		if err != nil {
			return 0, fmt.Errorf("list comments of %s: %w", ref, err)
		}
		for _, c := range comments.Items {
			if strings.HasPrefix(c.Body, marker) && c.Bot {
				return c.ID, nil
			}
		}
		if comments.Next == 0 {
			break
		}
		page = comments.Next
	}
	return 0, nil
}

// checkOutput is a check run's output for one project's plan.
func (s *Planner) checkOutput(p *records.Plan) (conclusion string, out *ghapp.CheckOutput) {
	s.redact.Scrub(p) // judged already: shown as it is stored, without secrets
	if p.Error != "" {
		out := &ghapp.CheckOutput{Title: "Not planned", Summary: report.NotPlanned("", p.Error, report.MaxCheckChars)}
		if len(p.Diagnostics) > 0 {
			// Terraform's diagnostics in full: summary, file:line, source, detail.
			out.Text = report.Diagnostics(p.Diagnostics, false, report.MaxCheckChars)
		}
		return "failure", out
	}
	rep := s.report(p)
	conclusion = "success"
	if !p.Decision.Allowed {
		conclusion = "failure"
	}
	return conclusion, &ghapp.CheckOutput{Title: rep.CheckTitle(), Summary: rep.CheckSummary(report.MaxCheckChars), Text: rep.CheckText(report.MaxCheckChars)}
}

func shortSHA(sha string) string { return pullreq.ShortSHA(sha) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-20] + "\n…(truncated)"
}
