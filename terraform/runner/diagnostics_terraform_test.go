package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// Terraform's errors reach people whole: which file and line, which
// variable, what terraform says to do, not only its first line.
func TestFailuresCarryTerraformsDiagnostics(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, bin string) {
		ctx := context.Background()
		r := realRunnerOn(t, bin)

		t.Run("an HCL syntax error names its file and line", func(t *testing.T) {
			dir := writeModule(t, "resource \"terraform_data\" \"x\" {\n  input = \"a\"\n\nresource {\n")
			err := newJob(t, r, JobConfig{Dir: dir}).Init(ctx)
			var initErr *InitError
			require.ErrorAs(t, err, &initErr)
			require.Regexp(t, `^terraform init failed \(exit 1\): main\.tf:4: Unclosed configuration block: There is no closing brace for this block before the end of the file\.$`, err.Error())
			d := requireDiagnostic(t, DiagnosticsOf(err), "Unclosed configuration block")
			require.Equal(t, "error", d.Severity)
			require.Equal(t, "main.tf", d.File)
			require.Equal(t, 4, d.Line)
			require.Contains(t, d.Snippet, "4: resource {")
			require.Contains(t, d.Detail, "incorrect brace nesting elsewhere in this file")
		})

		t.Run("a missing required variable is named", func(t *testing.T) {
			dir := writeModule(t, "variable \"region_name\" {\n  type = string\n}\nresource \"terraform_data\" \"x\" { input = var.region_name }\n")
			j := newJob(t, r, JobConfig{Dir: dir})
			require.NoError(t, j.Init(ctx))
			_, err := j.Plan(ctx)
			var planErr *PlanError
			require.ErrorAs(t, err, &planErr)
			require.Contains(t, err.Error(), `main.tf:1: No value for required variable: The root module input variable "region_name" is not set`)
			d := requireDiagnostic(t, DiagnosticsOf(err), "No value for required variable")
			require.Equal(t, 1, d.Line)
			require.Contains(t, d.Snippet, `variable "region_name" {`)
			require.Contains(t, d.Detail, "Use a -var or -var-file command line argument")
		})

		t.Run("every error is kept, the message counts them", func(t *testing.T) {
			dir := writeModule(t, "resource \"terraform_data\" \"x\" {\n  input = var.nope\n}\nresource \"terraform_data\" \"y\" {\n  input = local.nah\n}\n")
			j := newJob(t, r, JobConfig{Dir: dir})
			require.NoError(t, j.Init(ctx))
			_, err := j.Plan(ctx)
			require.Error(t, err)
			require.Contains(t, err.Error(), "main.tf:2: Reference to undeclared input variable")
			require.Contains(t, err.Error(), "(and 1 more error)")
			d := requireDiagnostic(t, DiagnosticsOf(err), "Reference to undeclared local value")
			require.Equal(t, 5, d.Line)
			require.Equal(t, `resource "terraform_data" "y"`, d.Context)
			require.Contains(t, d.Detail, `"nah"`)
		})

		t.Run("a failing workspace selection says why", func(t *testing.T) {
			dir := writeModule(t, `resource "terraform_data" "x" {}`)
			err := newJob(t, r, JobConfig{Dir: dir, Workspace: "no such/name"}).Init(ctx)
			var initErr *InitError
			require.ErrorAs(t, err, &initErr)
			require.Equal(t, "workspace", initErr.Command)
			require.NotContains(t, err.Error(), "exit status 1", "%q", initErr.Tail)
			require.Contains(t, err.Error(), `"no such/name" is not allowed`)
			require.NotEmpty(t, DiagnosticsOf(err))
		})

		t.Run("secrets in a diagnostic are redacted", func(t *testing.T) {
			const secret = "pw-7c1e9d2a4b"
			dir := writeModule(t, "variable \"pw\" { type = string }\nresource \"terraform_data\" \"x\" { input = tonumber(var.pw) }\n")
			j := newJob(t, r, JobConfig{Dir: dir, Vars: map[string]string{"pw": secret}, SecretEnv: map[string]string{"UNUSED_SECRET": secret}})
			require.NoError(t, j.Init(ctx))
			_, err := j.Plan(ctx)
			require.Error(t, err)
			diags := DiagnosticsOf(err)
			require.NotEmpty(t, diags)
			require.NotContains(t, fmt.Sprintf("%+v %s", diags, err), secret)
			require.Contains(t, fmt.Sprint(diags), Redacted, "the value terraform quoted is hidden, not dropped")
		})
	})
}

func requireDiagnostic(t *testing.T, diags []Diagnostic, summary string) Diagnostic {
	t.Helper()
	for _, d := range diags {
		if d.Summary == summary {
			return d
		}
	}
	require.Failf(t, "no diagnostic", "%q not among %+v", summary, diags)
	return Diagnostic{}
}

// A configuration with hundreds of errors cannot make a failure unbounded.
func TestDiagnosticsAreBounded(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "Error: Problem %d\n\n  on main.tf line %d:\n  %d: x\n\n%s\n\n", i, i+1, i+1, strings.Repeat("long detail ", 2000))
	}
	diags := parseDiagnostics(b.String(), true)
	require.Len(t, diags, maxDiagnostics)
	for _, d := range diags {
		require.LessOrEqual(t, len([]rune(d.Detail)), maxDetailRunes+1)
	}
	require.Equal(t, "main.tf:1", diags[0].Where())
}

func TestDiagnosticsParse(t *testing.T) {
	for _, tt := range []struct {
		name, out string
		failed    bool
		want      []Diagnostic
	}{
		{name: "box-drawn output", out: "╷\n│ Error: Bad thing\n│ \n│   on a.tf line 3, in module \"m\":\n│    3: x = 1\n│ \n│ Because.\n╵\n",
			want: []Diagnostic{{Severity: "error", Summary: "Bad thing", File: "a.tf", Line: 3, Context: `module "m"`, Snippet: "   3: x = 1", Detail: "Because."}}},
		{name: "a wrapped summary", out: "Error: Terraform encountered problems during initialisation, including problems\nwith the configuration, described below.\n\nThe configuration must be valid.\n",
			want: []Diagnostic{{Severity: "error", Summary: "Terraform encountered problems during initialisation, including problems with the configuration, described below.", Detail: "The configuration must be valid."}}},
		{name: "a warning", out: "Warning: Deprecated\n\nUse y.\n", want: []Diagnostic{{Severity: "warning", Summary: "Deprecated", Detail: "Use y."}}},
		{name: "bare prose of a failure", failed: true, out: "\nThe workspace name \"a b\" is not allowed. The name must contain only URL safe\ncharacters.\n",
			want: []Diagnostic{{Severity: "error", Summary: "The workspace name \"a b\" is not allowed. The name must contain only URL safe characters."}}},
		{name: "prose of a success is no diagnostic", out: "Initializing...\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, parseDiagnostics(tt.out, tt.failed))
		})
	}
}

// The command observer hears of every terraform command with its duration
// and error (metrics).
func TestCommandObserver(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, bin string) {
		type call struct {
			cmd string
			ok  bool
			err error
		}
		var calls []call
		var total time.Duration
		r := realRunnerOn(t, bin, WithCommandObserver(func(cmd string, d time.Duration, err error) {
			calls = append(calls, call{cmd, err == nil, err})
			total += d
		}))
		ctx := context.Background()
		j := newJob(t, r, JobConfig{Dir: writeModule(t, `resource "terraform_data" "x" {}`), Workspace: "w1"})
		require.NoError(t, j.Init(ctx))
		_, err := j.Plan(ctx)
		require.NoError(t, err)
		_, err = j.Show(ctx)
		require.NoError(t, err)
		var got []string
		for _, c := range calls {
			got = append(got, fmt.Sprintf("%s ok=%t", c.cmd, c.ok))
		}
		require.Equal(t, []string{"init ok=true", "workspace ok=false", "workspace ok=true", "plan ok=true", "show ok=true"}, got,
			"select of a missing workspace fails, then it is created")
		require.Positive(t, total)

		calls = nil
		j = newJob(t, r, JobConfig{Dir: writeModule(t, "variable \"v\" {\n  type = string\n}\n")})
		require.NoError(t, j.Init(ctx))
		_, err = j.Plan(ctx)
		require.Error(t, err)
		require.Len(t, calls, 2)
		require.Equal(t, "plan", calls[1].cmd)
		var planErr *PlanError
		require.ErrorAs(t, calls[1].err, &planErr, "the observer gets the typed error")
	})
}
