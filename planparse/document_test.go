package planparse_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

const planCommands = "run `terraform plan -out=tfplan` and `terraform show -json tfplan`"

// Only `terraform show -json` of a saved plan is judged; every other document
// terraform writes is refused with one line naming what it looks like.
func TestParseNotAPlan(t *testing.T) {
	tests := []struct {
		name, input string
		looksLike   string
	}{
		{name: "empty state", input: `{"format_version":"1.0"}`, looksLike: "`terraform show -json` of an empty state"},
		{name: "state", input: `{"format_version":"1.0","terraform_version":"1.5.7","values":{"root_module":{}}}`,
			looksLike: "`terraform show -json` of a state"},
		{name: "validate output", input: `{"format_version":"1.0","valid":false,"error_count":1,"warning_count":0,"diagnostics":[]}`,
			looksLike: "`terraform validate -json` output"},
		{name: "provider schemas", input: `{"format_version":"1.0","provider_schemas":{}}`,
			looksLike: "`terraform providers schema -json` output"},
		{name: "version and format only", input: `{"format_version":"1.2","terraform_version":"1.5.7"}`,
			looksLike: "a JSON object with neither planned_values nor resource_changes"},
		{name: "empty object", input: `{}`, looksLike: "a JSON object with neither planned_values nor resource_changes"},
		{name: "configuration only", input: `{"format_version":"1.2","configuration":{"root_module":{}}}`,
			looksLike: "a JSON object with neither planned_values nor resource_changes"},
		{name: "null plan members", input: `{"format_version":"1.2","planned_values":null,"resource_changes":null}`,
			looksLike: "a JSON object with neither planned_values nor resource_changes"},
		{name: "HCP Terraform redacted plan", input: `{"plan_format_version":"1.1","resource_drift":[],"resource_changes":[],"provider_format_version":"1.0","provider_schemas":{}}`,
			looksLike: "an HCP Terraform redacted plan"},
		{name: "plan -json log line", input: `{"@level":"info","@message":"Terraform 1.5.7","@module":"terraform.ui","terraform":"1.5.7","type":"version","ui":"1.1"}`,
			looksLike: "`terraform plan -json` output (its log)"},
		{name: "plan -json log stream", input: "{\"@level\":\"info\",\"@message\":\"Terraform 1.5.7\",\"type\":\"version\"}\n{\"@level\":\"info\",\"@message\":\"Plan: 0 to add\",\"type\":\"change_summary\"}\n",
			looksLike: "`terraform plan -json` output (its log)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, parse := range parsers {
				cs, err := parse([]byte(tt.input))
				require.Nil(t, cs, name)
				var npe *planparse.NotPlanError
				require.True(t, errors.As(err, &npe), "%s: %v", name, err)
				require.Equal(t, tt.looksLike, npe.LooksLike, name)
				require.NotContains(t, err.Error(), "\n")
				require.True(t, strings.HasPrefix(err.Error(), "this is "+tt.looksLike+", not a plan: "), err.Error())
				require.Contains(t, err.Error(), npe.Hint)
			}
		})
	}
}

func TestNotPlanErrorHints(t *testing.T) {
	_, err := planparse.ParseBytes([]byte(`{"format_version":"1.0","terraform_version":"1.5.7","values":{}}`))
	require.EqualError(t, err, "this is `terraform show -json` of a state, not a plan: "+planCommands)
	_, err = planparse.ParseBytes([]byte(`{"plan_format_version":"1.1","resource_changes":[]}`))
	require.ErrorContains(t, err, "json-output")
}

var parsers = map[string]func([]byte) (*planparse.ChangeSet, error){
	"ParseBytes": planparse.ParseBytes,
	"Parse":      func(b []byte) (*planparse.ChangeSet, error) { return planparse.Parse(bytes.NewReader(b)) },
}

func TestParsePlanStatus(t *testing.T) {
	const head = `{"format_version":"1.2","terraform_version":"1.8.0","planned_values":{"root_module":{}},`
	tests := []struct {
		name, input    string
		wantErr        string
		wantIncomplete bool
	}{
		{name: "complete", input: head + `"applyable":true,"complete":true,"errored":false}`},
		{name: "incomplete", input: head + `"applyable":true,"complete":false,"errored":false}`, wantIncomplete: true},
		{name: "errored", input: head + `"applyable":false,"complete":false,"errored":true}`,
			wantErr: "terraform reported errors; this plan is partial"},
		{name: "errored, members first", input: `{"errored":true,"format_version":"1.2","planned_values":{}}`,
			wantErr: "terraform reported errors; this plan is partial"},
		{name: "errored not a boolean", input: head + `"errored":"yes"}`, wantErr: "parse plan: errored is not a boolean"},
		{name: "errored null", input: head + `"errored":null}`, wantErr: "parse plan: errored is not a boolean"},
		{name: "complete not a boolean", input: head + `"complete":0}`, wantErr: "parse plan: complete is not a boolean"},
		{name: "planned_values not an object", input: `{"format_version":"1.2","planned_values":[]}`,
			wantErr: "parse plan: planned_values is not an object"},
		{name: "empty real plan", input: `{"format_version":"1.2","terraform_version":"1.5.7","planned_values":{"root_module":{}},"configuration":{"root_module":{}},"timestamp":"2026-12-01T20:41:24Z"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, parse := range parsers {
				cs, err := parse([]byte(tt.input))
				if tt.wantErr != "" {
					require.EqualError(t, err, tt.wantErr, name)
					require.Nil(t, cs)
					continue
				}
				require.NoError(t, err, name)
				require.Equal(t, tt.wantIncomplete, cs.Incomplete, name)
			}
		})
	}
	_, err := planparse.ParseBytes([]byte(head + `"errored":true}`))
	var ee *planparse.ErroredPlanError
	require.True(t, errors.As(err, &ee))
}

// Every real plan in the shared corpus is a plan, whatever members it has.
func TestParseCorpusPlansArePlans(t *testing.T) {
	files, err := filepath.Glob("../testdata/terraform/plans/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		for name, parse := range parsers {
			_, err := parse(raw)
			require.NoError(t, err, "%s %s", name, f)
		}
	}
}
