package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

// commentHead is what bot puts before the projects: marker, heading and status.
const commentHead = 400

// TestMarkdownNeverPanicsAndFits renders a comment the way the bot does, one
// share of the budget per project, for 0..500 projects, and every tiny budget.
func TestMarkdownNeverPanicsAndFits(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 7, 10, 20, 50, 100, 150, 200, 250, 300, 327, 400, 450, 499, 500} {
		t.Run(fmt.Sprintf("%d projects", n), func(t *testing.T) {
			budget := MaxCommentChars - commentHead - 200
			if n > 0 {
				budget /= n
			}
			var b strings.Builder
			for i := 0; i < n; i++ {
				r := deniedReport()
				r.Project = fmt.Sprintf("infra/streams/project-%03d", i)
				var md string
				require.NotPanics(t, func() { md = r.Markdown(budget) })
				require.LessOrEqual(t, len(md), budget)
				b.WriteString("\n" + md)
			}
			require.Less(t, commentHead+b.Len(), MaxCommentChars)
		})
	}
	for budget := 1; budget <= 400; budget++ {
		r := deniedReport()
		r.Project = strings.Repeat("p", 300)
		var md string
		require.NotPanics(t, func() { md = r.Markdown(budget) }, "budget %d", budget)
		require.LessOrEqual(t, len(md), budget, "budget %d", budget)
	}
}

func TestMarkdownFitsWithLongNames(t *testing.T) {
	long := strings.Repeat("`x@y www.e", 20000)
	r := &Report{
		Project: long,
		ChangeSet: &planparse.ChangeSet{Changes: []planparse.Change{{Address: long, StreamPrefix: long, ConsumerGroup: long,
			Action: planparse.ActionCreate, ShardsAfter: ip(1)}}},
		Decision: policy.Decision{Violations: []policy.Violation{{Rule: long, StreamPrefix: long, Message: long}}},
	}
	for _, budget := range []int{0, 100, 1000, 5000, 20000} {
		md := r.Markdown(budget)
		limit := budget
		if limit == 0 {
			limit = MaxCommentChars
		}
		require.LessOrEqual(t, len(md), limit)
	}
}

// TestCommentOfManyHostileProjectsIsInert joins the sections the way the bot
// does: however small each share, one project's cut section leaves nothing
// open for the next.
func TestCommentOfManyHostileProjectsIsInert(t *testing.T) {
	for _, n := range []int{1, 30, 300, 500} {
		budget := (MaxCommentChars - commentHead - 200) / n
		var b strings.Builder
		for i := 0; i < n; i++ {
			h := fmt.Sprintf("````@octocat %d <details> http://evil.example\n# x", i)
			md := hostileReport(h).Markdown(budget)
			require.LessOrEqual(t, len(md), budget)
			b.WriteString("\n" + md)
		}
		require.Less(t, commentHead+b.Len(), MaxCommentChars)
		requireInert(t, b.String()+sentinel, fmt.Sprintf("%d projects", n))
	}
}
