package prreport

import (
	"fmt"
	"path"
	"strings"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
)

// FoldNotice is the comment's line for a pull request whose projects are
// more than limit: their results are rows of the aggregate check run.
func FoldNotice(projects, limit int) string {
	return fmt.Sprintf("ℹ️ This pull request plans %d projects, more than `report.max_project_checks` (%d): each project's result is a row "+
		"(and, unless allowed, an annotation) of the check run `%s`, not a check run of its own.", projects, limit, CheckGateName)
}

// FoldedGateOutput is the aggregate check run of a pull request whose
// projects' results fold into it (more than report.max_project_checks): a
// table of every project's verdict and headline, the findings of those not
// allowed in its text, and an annotation on the directory of each project
// not allowed (the first ghapp.MaxCheckAnnotations of them).
func (s *Renderer) FoldedGateOutput(g Gate) (conclusion string, out *ghapp.CheckOutput) {
	conclusion, out = GateOutput(g)
	if g.Refused != "" || len(g.Plans) == 0 {
		return conclusion, out
	}
	var b strings.Builder
	b.WriteString("| project | verdict | result |\n|---|---|---|\n")
	var findings []*records.Plan
	for _, p := range g.Plans {
		_, po := s.CheckOutput(p)
		fmt.Fprintf(&b, "| %s | %s | %s |\n", report.Code(p.Project), Verdict(p), strings.ReplaceAll(report.FirstLine(po.Title), "|", "\\|"))
		if Verdict(p) != "✅ allowed" {
			findings = append(findings, p)
			if len(out.Annotations) < ghapp.MaxCheckAnnotations {
				out.Annotations = append(out.Annotations, ghapp.CheckAnnotation{Path: path.Clean(p.Dir), StartLine: 1, EndLine: 1, Level: "failure",
					Title: CheckPlanPrefix + p.Project, Message: Verdict(p) + ": " + report.FirstLine(po.Title)})
			}
		}
	}
	fmt.Fprintf(&b, "\nThese %d projects are more than `report.max_project_checks`: their results are folded into this check run rather than a check run each.\n", len(g.Plans))
	if g.Link != "" {
		fmt.Fprintf(&b, "\nThe plans and findings: [shardgate's comment](%s).\n", g.Link)
	}
	out.Summary = truncate(b.String(), maxCheckText)
	if len(findings) > 0 {
		budget := max(200, (report.MaxCheckChars-200)/len(findings))
		var t strings.Builder
		for _, p := range findings {
			_, po := s.CheckOutput(p)
			fmt.Fprintf(&t, "### %s %s\n\n%s\n\n", report.Code(p.Project), Verdict(p), truncate(po.Summary, budget))
		}
		out.Text = truncate(t.String(), maxCheckText)
	}
	return conclusion, out
}
