package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// run calls a subcommand in-process and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// volatile normalises what changes from run to run (times, the local user).
var volatile = regexp.MustCompile("valid until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC|` by [^ ,:]+")

func normalise(s string) string {
	return volatile.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "` by ") {
			return "` by USER"
		}
		return "valid until TIME"
	})
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test ./cmd/shardgate -update")
	require.Equal(t, string(want), got)
}

const exampleConfig = "../../examples/.shardgate.yaml"

// The example plans were written by the real terraform 1.5.7 (examples/plans/generate.sh).
func TestCheckExamplePlans(t *testing.T) {
	tests := []struct {
		plan  string
		extra []string
		code  int
		rules []string
	}{
		{plan: "01-scale-small", code: exitDenied, rules: []string{"quiesce_attestation"}},
		{plan: "01-scale-small", extra: []string{"--attest", "create-order"}, code: exitOK},
		{plan: "02-scale-too-far", code: exitDenied, rules: []string{"quiesce_attestation", "shard_delta", "shard_delta"}},
		{plan: "02-scale-too-far", extra: []string{"--attest", "create-order", "--label", "policy-exception/shard_delta"}, code: exitOK},
		{plan: "03-new-group", code: exitOK},
		{plan: "04-remove-group", code: exitDenied, rules: []string{"no_destroy"}},
		{plan: "04-remove-group", extra: []string{"--label", "policy-exception/no_destroy"}, code: exitOK},
		{plan: "05-conflicting-counts", extra: []string{"--attest", "create-order", "--label", "policy-exception/conflicting_shard_count"},
			code: exitDenied, rules: []string{"conflicting_shard_count"}},
	}
	for _, tt := range tests {
		name := tt.plan + strings.ReplaceAll(strings.Join(tt.extra, ""), "/", "_")
		t.Run(name, func(t *testing.T) {
			base := []string{"check", "--plan", "../../examples/plans/" + tt.plan + ".json", "--config", exampleConfig}
			code, out, stderr := run(t, append(append(base, tt.extra...), "--format", "json")...)
			require.Equal(t, tt.code, code, stderr)
			var got struct {
				Allowed    bool `json:"allowed"`
				Violations []struct {
					Rule string `json:"rule"`
				} `json:"violations"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			require.Equal(t, tt.code == exitOK, got.Allowed)
			var rules []string
			for _, v := range got.Violations {
				rules = append(rules, v.Rule)
			}
			require.Equal(t, tt.rules, rules)

			code, md, _ := run(t, append(append(base, tt.extra...), "--format", "markdown")...)
			require.Equal(t, tt.code, code)
			golden(t, name+".md", normalise(md))
		})
	}
}

func TestCheckBadUsageAndInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	plan := "../../testdata/terraform/plans/120_basic.json"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no plan flag", []string{"check"}, "--plan is required"},
		{"unknown flag", []string{"check", "--no-such-flag"}, "flag provided but not defined"},
		{"stray argument", []string{"check", "--plan", plan, "extra"}, `unexpected argument "extra"`},
		{"missing file", []string{"check", "--plan", filepath.Join(dir, "nope.json")}, "open plan"},
		{"not json", []string{"check", "--plan", write("a.json", "{not json")}, "parse plan"},
		{"empty", []string{"check", "--plan", write("b.json", "")}, "empty"},
		{"future format", []string{"check", "--plan", write("c.json", `{"format_version":"9.0","resource_changes":[]}`)}, `unsupported format_version "9.0"`},
		{"saved binary plan", []string{"check", "--plan", write("d.tfplan", "PK\x03\x04binary")}, "saved binary plan"},
		{"bad format", []string{"check", "--plan", plan, "--format", "yaml"}, `--format "yaml"`},
		{"bad attest", []string{"check", "--plan", plan, "--attest", ""}, "is not a stream prefix"},
		{"missing config", []string{"check", "--plan", plan, "--config", filepath.Join(dir, "none.yaml")}, "read config"},
		{"bad config", []string{"check", "--plan", plan, "--config", write("bad.yaml", "version: 2\nfoo: 1\n")}, "bad.yaml: 2:1: foo: unknown key"},
		{"unknown command", []string{"nope"}, `unknown command "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, tt.args...)
			require.Equal(t, exitUsage, code)
			require.Empty(t, out)
			require.Contains(t, stderr, tt.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			require.NotContains(t, stderr, "goroutine")
		})
	}
}

func TestCheckHelp(t *testing.T) {
	code, _, stderr := run(t, "check", "--help")
	require.Equal(t, exitOK, code)
	for _, f := range []string{"--plan", "--config", "--label", "--attest", "--format"} {
		require.Contains(t, stderr, f)
	}
}

func TestCheckNonCoordinatorPlansAreAllowed(t *testing.T) {
	plans, err := filepath.Glob("../../testdata/terraform/plans/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, plans)
	for _, p := range plans {
		t.Run(filepath.Base(p), func(t *testing.T) {
			for _, format := range []string{"json", "text", "markdown"} {
				code, out, stderr := run(t, "check", "--plan", p, "--format", format)
				require.Equal(t, exitOK, code, stderr)
				if format == "json" {
					var got map[string]any
					require.NoError(t, json.Unmarshal([]byte(out), &got))
					require.Equal(t, true, got["allowed"])
					for _, k := range []string{"changes", "violations", "exceptions_applied", "attestations_used", "labels_not_counted"} {
						require.Equal(t, []any{}, got[k], k)
					}
					require.IsType(t, []any{}, got["other_changes"], "every other resource change is listed")
					require.IsType(t, []any{}, got["warnings"])
				}
			}
		})
	}
}

func TestCheckReadsStdin(t *testing.T) {
	f, err := os.Open("../../examples/plans/03-new-group.json")
	require.NoError(t, err)
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	code, out, stderr := run(t, "check", "--plan", "-")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, "create    clicks/etl")
}

func TestCheckUserPolicyDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "policies"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".shardgate.yaml"), []byte("version: 1\npolicy:\n  policy_dirs: [policies]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "policies", "no_clicks.rego"), []byte(`package shardgate.rules.no_clicks

deny contains {"msg": "the clicks stream is frozen", "stream_prefix": c.stream_prefix, "consumer_group": c.consumer_group} if {
	some c in input.changes
	c.stream_prefix == "clicks"
}
`), 0o644))
	code, out, stderr := run(t, "check", "--plan", "../../examples/plans/03-new-group.json", "--config", filepath.Join(dir, ".shardgate.yaml"), "--format", "json")
	require.Equal(t, exitDenied, code, stderr)
	require.Contains(t, out, `"rule": "no_clicks"`)
	require.Contains(t, out, "the clicks stream is frozen")
}

func TestCheckWarnsAboutUnknownExceptionLabels(t *testing.T) {
	code, _, stderr := run(t, "check", "--plan", "../../examples/plans/03-new-group.json", "--label", "policy-exception/shard-delta")
	require.Equal(t, exitOK, code)
	require.Contains(t, stderr, `label "policy-exception/shard-delta" waives no known rule`)
}

// Sensitive values in a plan (variables, the configuration's literal arguments,
// sensitive attributes) never reach any output format.
func TestCheckNeverPrintsSensitiveValues(t *testing.T) {
	raw, err := os.ReadFile("../../examples/plans/02-scale-too-far.json")
	require.NoError(t, err)
	var plan map[string]any
	require.NoError(t, json.Unmarshal(raw, &plan))
	const secret = "hunter2-very-secret"
	plan["variables"].(map[string]any)["coordinator_password"] = map[string]any{"value": secret}
	for _, rc := range plan["resource_changes"].([]any) {
		change := rc.(map[string]any)["change"].(map[string]any)
		if after, ok := change["after"].(map[string]any); ok {
			after["input"].(map[string]any)["password_like"] = secret
			change["after_sensitive"] = map[string]any{"input": map[string]any{"password_like": true}}
		}
	}
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	for _, format := range []string{"text", "json", "markdown"} {
		_, out, stderr := run(t, "check", "--plan", path, "--format", format)
		require.NotContains(t, out+stderr, secret, format)
	}
}

// An output that cannot be written fails the check (exit 1, never a silent pass
// of an allowed plan), saying so, in every format.
func TestCheckOutputThatCannotBeWritten(t *testing.T) {
	plan := filepath.Join("..", "..", "examples", "plans", "03-new-group.json") // allowed
	for _, format := range []string{"json", "markdown", "text"} {
		var stderr bytes.Buffer
		code := runCheck(context.Background(), []string{"--plan", plan, "--config", exampleConfig, "--format", format}, failingWriter{}, &stderr)
		require.Equal(t, exitDenied, code, format)
		require.Contains(t, stderr.String(), "write output: no space left", format)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left") }
