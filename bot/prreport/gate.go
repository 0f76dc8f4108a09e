package prreport

import (
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
)

// CheckGateName is the aggregate check run on every commit shardgate judges
// (a pull request's head, a merge group's head): the one check a branch
// protection rule or a merge queue requires. It succeeds iff every planned
// project is allowed, and when the change touches no project.
const CheckGateName = "shardgate"

// Gate is what the aggregate check says of one commit.
type Gate struct {
	// Plans are the commit's judged plans, in order.
	Plans []*records.Plan
	// Link is the address of shardgate's comment, "" for none.
	Link string
	// Refused is set when the commit was not planned and must not pass
	// (a fork, a refused sandbox, a bad configuration): why, as markdown.
	Refused string
	// Subject names what was judged ("this pull request", "this merge group").
	Subject string
}

// Allowed says whether every planned project is allowed.
func (g Gate) Allowed() bool {
	if g.Refused != "" {
		return false
	}
	for _, p := range g.Plans {
		if p.Error != "" || !p.Decision.Allowed {
			return false
		}
	}
	return true
}

// Verdict is a plan's one-word verdict.
func Verdict(p *records.Plan) string {
	switch {
	case p.Error != "":
		return "❌ not planned"
	case p.Decision.Allowed:
		return "✅ allowed"
	default:
		return "❌ denied"
	}
}

// GateOutput is the aggregate check run's conclusion and output.
func GateOutput(g Gate) (conclusion string, out *ghapp.CheckOutput) {
	subject := g.Subject
	if subject == "" {
		subject = "this change"
	}
	var b strings.Builder
	conclusion, title := "success", ""
	switch {
	case g.Refused != "":
		conclusion, title = "failure", "Not planned"
		b.WriteString(g.Refused + "\n")
	case len(g.Plans) == 0:
		title = "No Terraform project changed"
		fmt.Fprintf(&b, "No project of `.shardgate.yaml` reads a file %s changes: there is nothing to judge, and nothing to apply.\n", subject)
	default:
		denied := 0
		b.WriteString("| project | verdict |\n|---|---|\n")
		for _, p := range g.Plans {
			if Verdict(p) != "✅ allowed" {
				denied++
			}
			fmt.Fprintf(&b, "| %s | %s |\n", report.Code(p.Project), Verdict(p))
		}
		title = fmt.Sprintf("Allowed: %d of %d projects", len(g.Plans), len(g.Plans))
		if denied > 0 {
			conclusion, title = "failure", fmt.Sprintf("Not allowed: %d of %d projects", denied, len(g.Plans))
		}
		b.WriteString("\nEach project's findings are on its own check run, `" + CheckPlanPrefix + "<project>`.\n")
	}
	if g.Link != "" {
		fmt.Fprintf(&b, "\nThe plans and findings: [shardgate's comment](%s).\n", g.Link)
	}
	return conclusion, &ghapp.CheckOutput{Title: title, Summary: truncate(b.String(), maxCheckText)}
}
