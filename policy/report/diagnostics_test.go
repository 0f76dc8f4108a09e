package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiagnosticsShowWhereAndWhat(t *testing.T) {
	diags := []Diagnostic{
		{Severity: "error", Summary: "No value for required variable", File: "main.tf", Line: 1, Snippet: `   1: variable "region_name" {`,
			Detail: `The root module input variable "region_name" is not set, and has no default value.`},
		{Severity: "warning", Summary: "Deprecated attribute"},
	}
	md := NotPlannedWithDiagnostics("prod", "terraform plan failed (exit 1): main.tf:1: No value for required variable", diags, true, 0)
	require.Contains(t, md, "<details><summary>Terraform's diagnostics (2)</summary>")
	require.Contains(t, md, "❌ **Error** at `main.tf:1`: No value for required variable")
	require.Contains(t, md, `variable "region_name" {`)
	require.Contains(t, md, `"region_name" is not set`)
	require.Contains(t, md, "⚠️ **Warning**: Deprecated attribute")
	require.True(t, strings.HasSuffix(md, "</details>\n"))

	open := Diagnostics(diags, false, 0)
	require.Empty(t, open, "no room, nothing")
	open = Diagnostics(diags, false, MaxCheckChars)
	require.NotContains(t, open, "<details>", "the check run shows them open")
	require.Contains(t, open, "main.tf:1")
}

func TestDiagnosticsFitTheirBudget(t *testing.T) {
	var diags []Diagnostic
	for range 30 {
		diags = append(diags, Diagnostic{Severity: "error", Summary: "Problem", File: "main.tf", Line: 2,
			Detail: strings.Repeat("a long line of detail\n", 200)})
	}
	for _, budget := range []int{200, 1000, 5000, 65536} {
		md := NotPlannedWithDiagnostics("p", "terraform plan failed", diags, true, budget)
		require.LessOrEqual(t, len(md), budget)
		require.Contains(t, md, "Not planned")
		if budget >= 1000 {
			require.True(t, strings.Contains(md, "main.tf:2"), "the first diagnostic is shown, if only its headline")
		}
		require.Equal(t, budget < 65536, strings.Contains(md, "more diagnostics not shown"), "left out only when they do not fit")
	}
}
