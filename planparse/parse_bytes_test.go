package planparse_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// ParseBytes checks the members it does not read only for structure; Parse
// validates them. Both reject a plan whose structure is broken anywhere.
func TestParseBytesSkippedMembers(t *testing.T) {
	const head = `{"format_version":"1.2","resource_changes":[],"prior_state":`
	tests := []struct {
		name, value string
		bytesErr    string // "" when ParseBytes accepts the plan
	}{
		{name: "valid", value: `{"values":{"a":[1,"}",{"b":null}]}}`},
		{name: "missing colon", value: `{"values" {}}`},
		{name: "bad literal", value: `{"a":tru}`},
		{name: "duplicate names", value: `{"a":1,"a":2}`},
		{name: "unterminated string", value: `{"a":"}}`, bytesErr: "parse plan: not JSON: unterminated string at offset 65"},
		{name: "unbalanced", value: `{"a":[1,2}}`, bytesErr: "parse plan: not JSON: mismatched '}' at offset 69"},
		{name: "stray character", value: `{"a":x}`, bytesErr: "parse plan: not JSON: invalid character 'x' at offset 65"},
		{name: "invalid UTF-8", value: "{\"a\":\"\xfe\"}", bytesErr: "parse plan: not JSON: invalid UTF-8 in the value at offset 60"},
		{name: "nested too deeply", value: strings.Repeat("[", 10000) + strings.Repeat("]", 10000), bytesErr: "parse plan: not JSON: nested too deeply at offset 10059"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := []byte(head + tt.value + `}`)
			cs, err := planparse.ParseBytes(plan)
			_, serr := planparse.Parse(bytes.NewReader(plan))
			if tt.bytesErr != "" {
				require.EqualError(t, err, tt.bytesErr)
				require.Nil(t, cs)
				require.ErrorContains(t, serr, "parse plan: not JSON: ")
				return
			}
			require.NoError(t, err)
			require.Equal(t, "1.2", cs.FormatVersion)
			if tt.name == "valid" {
				require.NoError(t, serr)
			} else {
				require.ErrorContains(t, serr, "parse plan: not JSON: ")
			}
		})
	}
}

// Malformed JSON inside a resource_changes entry is reported with the entry and
// its offset in the whole plan.
func TestParseBytesMalformedEntry(t *testing.T) {
	const head = `{"format_version":"1.2","variables":{},"resource_changes":[{"type":"null_resource","change":{"actions":["no-op"]}},`
	tests := []struct{ name, entry, want string }{
		{"missing value", `{"type":}`, "resource_changes[1] is malformed at offset 115"},
		{"unbalanced", `{"type":"redisstreamcoordinator_group","change":[}`, "resource_changes[1] is malformed at offset 115"},
		{"bad literal read", `{"type":"redisstreamcoordinator_group","name":"g","mode":"managed","change":{"actions":["create"],"before":nul,"after":{}}}`,
			"resource_changes[1] is malformed at offset 115"},
		{"bad number read", `{"type":"redisstreamcoordinator_group","name":"g","mode":"managed","change":{"actions":["create"],"before":null,"after":{"shard_count":01}}}`,
			"resource_changes[1] is malformed at offset 115"},
		{"control character in a string read", "{\"type\":\"redisstreamcoordinator_group\",\"address\":\"a\tb\"}",
			"resource_changes[1] is malformed at offset 115"},
		{"bad marker", `{"type":"redisstreamcoordinator_group","name":"g","mode":"managed","change":{"actions":["create"],"before":null,"after":{},"after_sensitive":{"x":tru}}}`,
			"resource_changes[1] is malformed at offset 115"},
		{"trailing comma", `{"type":"null_resource","change":{"actions":["no-op"]}},]`, "invalid character ']' at the start of a value at offset 171"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := []byte(head + tt.entry + `]}`)
			_, err := planparse.ParseBytes(plan)
			require.EqualError(t, err, "parse plan: not JSON: "+tt.want)
			_, serr := planparse.Parse(bytes.NewReader(plan))
			require.ErrorContains(t, serr, "parse plan: not JSON: ")
		})
	}
}

// The members around resource_changes are found again after the decoder reads it.
func TestParseBytesMembersAfterResourceChanges(t *testing.T) {
	plan := []byte(`{"resource_changes":[{"type":"null_resource","change":{"actions":["no-op"]}}] , "planned_values":{"x":[]},"format_version":"1.2","terraform_version":"1.5.7"}`)
	cs, err := planparse.ParseBytes(plan)
	require.NoError(t, err)
	require.Equal(t, "1.2", cs.FormatVersion)
	require.Equal(t, "1.5.7", cs.TerraformVersion)
	require.Empty(t, cs.Changes)
}

// ParseBytes lets duplicate names through where it does not read them, but a name
// it reads twice is as malformed for it as for Parse.
func TestParseBytesDuplicateNames(t *testing.T) {
	const group = "redisstreamcoordinator_group.g"
	const mod = "module.orders.terraform_data.stream_group"
	tests := []struct {
		name, plan string
		bytesErr   string // "" when ParseBytes accepts the plan
	}{
		{name: "type twice in a coordinator entry", plan: string(planJSON(`{"type":"redisstreamcoordinator_group","type":"null_resource"}`)),
			bytesErr: `duplicate member name "type" in resource_changes[0]`},
		{name: "name twice in another entry", plan: string(planJSON(`{"type":"null_resource","name":"a","name":"b"}`)),
			bytesErr: `duplicate member name "name" in resource_changes[0]`},
		{name: "change twice", plan: string(planJSON(entry(group, groupType, change(`["create"]`, `null`, orders4), `"change":{}`))),
			bytesErr: `duplicate member name "change" in resource_changes[0]`},
		{name: "actions twice", plan: string(planJSON(entry(group, groupType, `{"actions":["create"],"actions":["delete"],"before":null,"after":`+orders4+`}`))),
			bytesErr: `duplicate member name "change.actions" in resource_changes[0]`},
		{name: "attribute twice", plan: string(planJSON(entry(group, groupType, change(`["create"]`, `null`, `{"stream_prefix":"a","stream_prefix":"b","consumer_group":"g","shard_count":1}`)))),
			bytesErr: `duplicate member name "change.after.stream_prefix" in resource_changes[0]`},
		{name: "module input twice", plan: string(planJSON(moduleEntry(mod, `["create"]`, `null`, `{"input":{},"input":{}}`, `{}`))),
			bytesErr: `duplicate member name "change.after.input" in resource_changes[0]`},
		{name: "module input member twice", plan: string(planJSON(moduleEntry(mod, `["create"]`, `null`, `{"input":{"shard_count":4,"shard_count":8}}`, `{}`))),
			bytesErr: `duplicate member name "change.after.input.shard_count" in resource_changes[0]`},
		{name: "marker member twice", plan: string(planJSON(moduleEntry(mod, `["create"]`, `null`, moduleInput("orders", "4"), `{"input":{"shard_count":true,"shard_count":false}}`))),
			bytesErr: `duplicate member name "change.after_unknown.shard_count" in resource_changes[0]`},
		// Only the input of a before side is read (after sides are fingerprinted whole).
		{name: "unread member twice", plan: string(planJSON(moduleEntry(mod, `["update"]`, `{"output":1,"output":2,"input":{"consumer_group":"g","coordinator_base_url":"u","shard_count":4,"stream_prefix":"p"}}`,
			`{"input":{"consumer_group":"g","coordinator_base_url":"u","shard_count":4,"stream_prefix":"p"}}`, `{}`)))},
		{name: "after member twice", plan: string(planJSON(moduleEntry(mod, `["create"]`, `null`, `{"output":1,"output":2,"input":{"consumer_group":"g","coordinator_base_url":"u","shard_count":4,"stream_prefix":"p"}}`, `{}`))),
			bytesErr: `duplicate member name "output" in resource_changes[0]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := planparse.ParseBytes([]byte(tt.plan))
			_, serr := planparse.Parse(strings.NewReader(tt.plan))
			require.ErrorContains(t, serr, "parse plan: not JSON: ", "Parse validates every name")
			if tt.bytesErr == "" {
				require.NoError(t, err)
				require.Len(t, cs.Changes, 1)
				return
			}
			require.Nil(t, cs)
			require.ErrorContains(t, err, "parse plan: not JSON: "+tt.bytesErr+" at offset 72")
		})
	}
}

// A plan cut off anywhere is an error, never a panic.
func TestParseBytesTruncated(t *testing.T) {
	plan := planJSON(
		moduleEntry("module.orders.terraform_data.stream_group", `["delete","create"]`, moduleInput("orders", "4"), moduleInput("orders", "8"), `{"input":{}}`),
		entry("redisstreamcoordinator_group.g", groupType, change(`["update"]`, orders4, renamed8), `"action_reason":"replace_because_tainted"`),
		`{"address":"null_resource.x","mode":"managed","type":"null_resource","name":"x","change":{"actions":["create"]}}`,
	)
	full, err := planparse.ParseBytes(plan)
	require.NoError(t, err)
	require.NotEmpty(t, full.Changes)
	for n := range len(plan) {
		cs, err := planparse.ParseBytes(plan[:n])
		require.Error(t, err, "cut at %d", n)
		require.Nil(t, cs)
	}
}

// ParseBytesProgress reports each top-level member and each resource_changes entry
// as it passes it, so that a caller can drop the pages behind the parse.
func TestParseBytesProgress(t *testing.T) {
	e1 := moduleEntry(`module.s["a"].terraform_data.stream_group`, `["no-op"]`, moduleInput("a", "4"), moduleInput("a", "4"), `{}`)
	e2 := moduleEntry(`module.s["b"].terraform_data.stream_group`, `["update"]`, moduleInput("b", "4"), moduleInput("b", "8"), `{}`)
	head := `{"format_version":"1.2","resource_changes":[`
	plan := head + e1 + "," + e2 + `],"prior_state":{}}`
	var got []int
	cs, err := planparse.ParseBytesProgress([]byte(plan), func(n int) { got = append(got, n) })
	require.NoError(t, err)
	require.Len(t, cs.Changes, 2)
	afterE1 := len(head) + len(e1)
	afterE2 := afterE1 + 1 + len(e2)
	want := []int{
		len(`{"format_version":"1.2"`), // format_version
		afterE1, afterE2,               // each entry
		afterE2 + 1,   // resource_changes
		len(plan) - 1, // prior_state
	}
	require.Equal(t, want, got)
}

// A member the parse skips may be most of the plan (planned_values, prior_state
// and configuration of 50,000 instances are a hundred megabytes): its progress is
// reported as the skip moves through it, not only once it is passed, so that a
// caller never holds one such member whole. The member is still validated whole.
func TestParseBytesProgressInsideSkippedMembers(t *testing.T) {
	var big strings.Builder
	big.WriteString(`{"root_module":{"resources":[`)
	for i := 0; big.Len() < 8<<20; i++ {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `{"address":"a.b%d","values":{"s":"%s","n":[1,2,{"x":"é"}]}}`, i, strings.Repeat("v", 200))
	}
	big.WriteString(`]}}`)
	head := `{"format_version":"1.2","planned_values":`
	plan := head + big.String() + `,"resource_changes":[],"prior_state":` + big.String() + `}`
	var got []int
	_, err := planparse.ParseBytesProgress([]byte(plan), func(n int) { got = append(got, n) })
	require.NoError(t, err)
	inside := func(from, to int) (n int) {
		for _, g := range got {
			if g > from && g < to {
				n++
			}
		}
		return n
	}
	pvEnd := len(head) + big.Len()
	require.GreaterOrEqual(t, inside(len(head), pvEnd), 4, "progress inside planned_values: %v", got)
	psStart := len(plan) - 1 - big.Len()
	require.GreaterOrEqual(t, inside(psStart, len(plan)-1), 4, "progress inside prior_state: %v", got)
	require.True(t, slices.IsSorted(got), "offsets only grow: %v", got)

	// Invalid UTF-8 deep inside a skipped member is still found.
	bad := []byte(plan)
	bad[len(head)+big.Len()-100] = 0xff
	_, err = planparse.ParseBytesProgress(bad, func(int) {})
	require.Error(t, err)
}
