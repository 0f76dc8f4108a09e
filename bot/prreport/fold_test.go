package prreport

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/store/records"
)

// A thousand projects fold into one aggregate check: every project is a row
// of its summary, the output stays under GitHub's limits, the projects not
// planned are failures with an annotation each (at most GitHub's 50 per
// request), and the conclusion is the gate's.
func TestFoldedGateNamesEveryProjectWithinGitHubsLimits(t *testing.T) {
	w, _, _ := newWorld(t)
	var plans []*records.Plan
	for i := range 1000 {
		p := &records.Plan{Project: fmt.Sprintf("svc-%04d", i), Dir: fmt.Sprintf("projects/svc-%04d/", i)}
		if i%10 == 0 {
			p.Error = "terraform init failed: module not found"
		} else {
			p.Decision.Allowed = true
		}
		plans = append(plans, p)
	}
	conclusion, out := w.render.FoldedGateOutput(Gate{Plans: plans, Subject: "this pull request"})
	require.Equal(t, "failure", conclusion)
	require.Equal(t, "Not allowed: 100 of 1000 projects", out.Title)
	require.LessOrEqual(t, len(out.Summary), maxCheckText)
	require.LessOrEqual(t, len(out.Text), maxCheckText)
	for _, p := range plans {
		require.Contains(t, out.Summary, "| `"+p.Project+"` |")
	}
	require.Len(t, out.Annotations, ghapp.MaxCheckAnnotations)
	require.Equal(t, ghapp.CheckAnnotation{Path: "projects/svc-0000", StartLine: 1, EndLine: 1, Level: "failure",
		Title: CheckPlanPrefix + "svc-0000", Message: "❌ not planned: Not planned"}, out.Annotations[0])
	require.True(t, strings.Contains(out.Text, "`svc-0010` ❌ not planned"), "the findings of a project not planned")

	conclusion, out = w.render.FoldedGateOutput(Gate{Plans: plans[1:10]})
	require.Equal(t, "success", conclusion)
	require.Empty(t, out.Annotations)
	require.Empty(t, out.Text)
}
