package prreport

import (
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
)

// Renderer renders judged plans: the comment's sections and the check runs'
// outputs.
type Renderer struct {
	// Rules are the policy's rules, the report's legend.
	Rules []policy.RuleInfo
	// Approvers says who may add exception labels and attest.
	Approvers string
	// Redact scrubs a plan of what it copied from a secret before it is shown.
	Redact *redact.Redactor
}

// Comment builds the living comment: marker, head, status, the notice (the
// sandbox's, or ""), notes, the applies section, then one section per
// project, all under GitHub's limit.
func (s *Renderer) Comment(st *records.PRState, notice, applies string, plans []*records.Plan) string {
	var b strings.Builder
	b.WriteString(CommentMarker + "\n")
	fmt.Fprintf(&b, "## shardgate\n\n**Head** `%s` · **Status:** %s\n", pullreq.ShortSHA(st.HeadSHA), st.Status)
	if notice != "" {
		b.WriteString("\n" + notice + "\n")
	}
	for _, n := range st.Notes {
		fmt.Fprintf(&b, "\n> %s\n", n) // built escaped (approval.Labels.VoidExceptions)
	}
	if st.ConfigError != "" {
		fmt.Fprintf(&b, "\n### ❌ `.shardgate.yaml` on the base branch is not valid\n\nFix it on %s (shardgate reads its configuration from the base branch, never from the pull request):\n\n%s",
			report.Code(st.BaseRef), report.CodeBlock(st.ConfigError))
	}
	head := b.String()
	budget := max(1, (report.MaxCommentChars-len(head)-len(applies)-200)/max(1, len(plans)))
	b.WriteString(applies)
	for _, p := range plans {
		b.WriteString("\n")
		b.WriteString(s.project(p, budget))
		b.WriteString(settings(p))
	}
	out := b.String()
	if len(out) > report.MaxCommentChars {
		out = out[:report.MaxCommentChars-100] + "\n\n_…cut to fit GitHub's comment limit._\n"
	}
	return out
}

func (s *Renderer) project(p *records.Plan, budget int) string {
	if !p.PlannedAt.IsZero() {
		// Judged: shown as it is stored, without what a plan copied from a
		// secret. (Comments.Upsert redacts the whole body in any case.)
		s.Redact.Scrub(p)
	}
	if p.Error != "" {
		return report.NotPlannedWithDiagnostics(p.Project, p.Error, p.Diagnostics, true, budget)
	}
	rep := s.Report(p)
	return rep.Markdown(budget)
}

// Report is one project's judged plan as the report renders it.
func (s *Renderer) Report(p *records.Plan) *report.Report {
	return &report.Report{Project: p.Project, ChangeSet: p.ChangeSet, Decision: p.Decision, Rules: s.Rules,
		Coordinator: p.Coordinator, Approvers: s.Approvers, LockWaits: p.LockWaits}
}

// CheckOutput is a check run's output for one project's plan.
func (s *Renderer) CheckOutput(p *records.Plan) (conclusion string, out *ghapp.CheckOutput) {
	s.Redact.Scrub(p) // judged already: shown as it is stored, without secrets
	if p.Error != "" {
		out := &ghapp.CheckOutput{Title: "Not planned", Summary: report.NotPlanned("", p.Error, report.MaxCheckChars)}
		if len(p.Diagnostics) > 0 {
			// Terraform's diagnostics in full: summary, file:line, source, detail.
			out.Text = report.Diagnostics(p.Diagnostics, false, report.MaxCheckChars)
		}
		return "failure", out
	}
	rep := s.Report(p)
	conclusion = p.CheckConclusion()
	if conclusion == "" { // judged by now: CheckOutput is asked at the end
		conclusion = records.ConclusionFailure
		if p.Decision.Allowed {
			conclusion = records.ConclusionSuccess
		}
	}
	return conclusion, &ghapp.CheckOutput{Title: rep.CheckTitle(), Summary: rep.CheckSummary(report.MaxCheckChars), Text: rep.CheckText(report.MaxCheckChars)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-20] + "\n…(truncated)"
}

// ApplyCheckOutput is the apply check run's conclusion and output for an
// apply's outcome: applied, or not with reason.
func ApplyCheckOutput(applied bool, reason string) (string, *ghapp.CheckOutput) {
	conclusion, title := "success", "Applied"
	if !applied {
		conclusion, title = "failure", "Not applied"
	}
	return conclusion, &ghapp.CheckOutput{Title: title, Summary: truncate(report.CodeBlock(reason), maxCheckText)}
}
