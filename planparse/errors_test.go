package planparse_test

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

func TestParseErrors(t *testing.T) {
	const group = "redisstreamcoordinator_group.g"
	tests := []struct {
		name, input string
		want        string // the whole message, or its start when it ends in "..."
	}{
		{name: "empty", input: "", want: "parse plan: empty input"},
		{name: "whitespace", input: " \n\t", want: "parse plan: empty input"},
		{name: "not JSON", input: "Error: no plan", want: "parse plan: not JSON: ..."},
		{name: "not an object", input: `[{"format_version":"1.2"}]`, want: "parse plan: not a JSON object"},
		{name: "truncated", input: `{"format_version":"1.2","resource_changes":[{"type":`, want: "parse plan: not JSON: ..."},
		{name: "trailing object", input: `{"format_version":"1.2"} {}`, want: "parse plan: trailing data after the plan object"},
		{name: "trailing garbage", input: `{"format_version":"1.2"}x`, want: "parse plan: trailing data after the plan object"},
		{name: "missing format_version", input: `{"resource_changes":[]}`, want: "parse plan: format_version is missing"},
		{name: "unsupported format_version", input: `{"format_version":"9.0","resource_changes":[]}`,
			want: `parse plan: unsupported format_version "9.0" (supported: >= 0.1, < 2.0)`},
		{name: "format_version 2.0", input: `{"resource_changes":[],"format_version":"2.0"}`,
			want: `parse plan: unsupported format_version "2.0" (supported: >= 0.1, < 2.0)`},
		{name: "format_version not a version", input: `{"format_version":"one","planned_values":{}}`,
			want: `parse plan: unsupported format_version "one" (supported: >= 0.1, < 2.0)`},
		{name: "format_version not a string", input: `{"format_version":1.2}`, want: "parse plan: format_version is not a string"},
		{name: "duplicate names", input: `{"format_version":"1.2","format_version":"1.2"}`, want: "parse plan: not JSON: ..."},
		{name: "duplicate names in an entry", input: `{"format_version":"1.2","resource_changes":[{"type":"a","type":"b"}]}`,
			want: "parse plan: not JSON: ..."},
		{name: "invalid UTF-8", input: "{\"format_version\":\"1.2\",\"x\":\"\xff\"}", want: "parse plan: not JSON: ..."},
		{name: "resource_changes not an array", input: `{"format_version":"1.2","resource_changes":{}}`,
			want: "parse plan: resource_changes is not an array"},
		{name: "entry not an object", input: `{"format_version":"1.2","resource_changes":[1]}`,
			want: "parse plan: resource_changes[0] is not an object"},
		{name: "type not a string", input: `{"format_version":"1.2","resource_changes":[{"type":1,"name":"redisstreamcoordinator_group"}]}`,
			want: "parse plan: resource_changes[0].type is not a string"},
		{name: "change missing", input: string(planJSON(`{"address":"` + group + `","mode":"managed","type":"redisstreamcoordinator_group","name":"g"}`)),
			want: "parse plan: redisstreamcoordinator_group.g: change is missing"},
		{name: "unsupported actions", input: string(planJSON(entry(group, groupType, change(`["create","update"]`, `null`, orders4)))),
			want: `parse plan: redisstreamcoordinator_group.g: unsupported actions ["create" "update"]`},
		{name: "actions not strings", input: string(planJSON(entry(group, groupType, change(`[1]`, `null`, orders4)))),
			want: `parse plan: redisstreamcoordinator_group.g: change.actions is not an array of strings`},
		{name: "delete without before", input: string(planJSON(entry(group, groupType, change(`["delete"]`, `null`, `null`)))),
			want: "parse plan: redisstreamcoordinator_group.g: change.before is missing"},
		{name: "prefix not a string", input: string(planJSON(entry(group, groupType, change(`["create"]`, `null`, `{"stream_prefix":7,"consumer_group":"g","shard_count":1}`)))),
			want: "parse plan: redisstreamcoordinator_group.g: stream_prefix is not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := planparse.ParseBytes([]byte(tt.input))
			require.Error(t, err)
			require.Nil(t, cs)
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
				require.True(t, strings.HasPrefix(err.Error(), prefix), err.Error())
			} else {
				require.EqualError(t, err, tt.want)
			}
			require.NotContains(t, err.Error(), "\n")
			// The streaming path words every error the same way.
			_, err2 := planparse.Parse(iotest.HalfReader(strings.NewReader(tt.input)))
			require.Error(t, err2)
			require.Equal(t, strings.SplitN(err.Error(), ":", 3)[:2], strings.SplitN(err2.Error(), ":", 3)[:2])
		})
	}
}

func TestFormatError(t *testing.T) {
	_, err := planparse.ParseBytes([]byte(`{"format_version":"9.0","planned_values":{}}`))
	var fe *planparse.FormatError
	require.True(t, errors.As(err, &fe))
	require.Equal(t, "9.0", fe.Version)
}

func TestParseFormatVersions(t *testing.T) {
	for _, v := range []string{"0.1", "0.2", "1.0", "1.2", "1.99"} {
		t.Run(v, func(t *testing.T) {
			cs, err := planparse.ParseBytes([]byte(`{"format_version":"` + v + `","planned_values":{"root_module":{}}}`))
			require.NoError(t, err)
			require.Equal(t, v, cs.FormatVersion)
			require.NotNil(t, cs.Changes, "empty, not null, in policy input")
		})
	}
}
