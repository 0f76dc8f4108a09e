package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/mdtext"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func ip(n int) *int { return &n }

var rules = []policy.RuleInfo{
	{ID: "no_destroy", Title: "No destroy", Waivable: true, ExceptionLabel: "policy-exception/no_destroy"},
	{ID: "shard_delta", Title: "Bounded shard delta", Waivable: true, ExceptionLabel: "policy-exception/shard_delta"},
	{ID: "quiesce_attestation", Title: "Producer-quiesce attestation", Waivable: true, ExceptionLabel: "policy-exception/quiesce_attestation"},
	{ID: "conflicting_shard_count", Title: "Conflicting shard count"},
}

const addr = `module.stream_group["create-order/billing"].terraform_data.stream_group`

func deniedReport() *Report {
	return &Report{
		ChangeSet: &planparse.ChangeSet{
			FormatVersion: "1.2",
			Changes: []planparse.Change{
				{Address: addr, Kind: planparse.KindModule, StreamPrefix: "create-order", ConsumerGroup: "billing",
					Action: planparse.ActionScale, ShardsBefore: ip(4), ShardsAfter: ip(16),
					ActionReason: "replace_because_cannot_update", TerraformActions: []string{"delete", "create"}},
				{Address: `module.stream_group["payments/ledger"].terraform_data.stream_group`, Kind: planparse.KindModule,
					StreamPrefix: "payments", ConsumerGroup: "ledger", Action: planparse.ActionUnmanage, ShardsBefore: ip(2),
					TerraformActions: []string{"delete"}},
				{Address: `module.stream_group["payments/audit"].terraform_data.stream_group`, Kind: planparse.KindModule,
					StreamPrefix: "payments", ConsumerGroup: "audit", Action: planparse.ActionNoop, ShardsBefore: ip(2), ShardsAfter: ip(2),
					TerraformActions: []string{"no-op"}},
				{Address: `module.stream_group["clicks/etl"].terraform_data.stream_group`, Kind: planparse.KindModule,
					StreamPrefix: "clicks", ConsumerGroup: "etl", Action: planparse.ActionCreate, Unknown: []string{"shard_count"},
					TerraformActions: []string{"create"}},
			},
			Resources: []planparse.ResourceChange{
				{Address: addr, Actions: []string{"delete", "create"}, ActionReason: "replace_because_cannot_update",
					Diff: []string{"input.shard_count: 4 -> 16", "triggers_replace[3]: \"4\" -> \"16\""}},
				{Address: `module.stream_group["payments/ledger"].terraform_data.stream_group`, Actions: []string{"delete"}},
			},
		},
		Decision: policy.Decision{
			Violations: []policy.Violation{
				{Rule: "no_destroy", Title: "No destroy", StreamPrefix: "payments", ConsumerGroup: "ledger",
					Message: "payments/ledger would no longer be managed by Terraform", Waivable: true, ExceptionLabel: "policy-exception/no_destroy"},
				{Rule: "quiesce_attestation", StreamPrefix: "create-order",
					Message: "scaling create-order needs a producer-quiesce attestation", Waivable: true, ExceptionLabel: "policy-exception/quiesce_attestation"},
				{Rule: "shard_delta", StreamPrefix: "create-order", ConsumerGroup: "billing",
					Message: "4 -> 16 shards changes by 12 (limit 4) and a factor of 4.00 (limit 2.00)", Waivable: true, ExceptionLabel: "policy-exception/shard_delta"},
				{Rule: "unknown_value", StreamPrefix: "clicks", ConsumerGroup: "etl", Message: "shard_count is unknown until apply"},
			},
			Warnings:         []policy.Warning{{Rule: "tainted_replace", StreamPrefix: "create-order", ConsumerGroup: "billing", Message: "the last apply failed"}},
			LabelsNotCounted: []policy.Label{{Name: "policy-exception/no_destroy", Actor: "octocat", Reason: "added by the PR author"}},
		},
		Rules:     rules,
		Approvers: "an approver (@alice or a member of @acme/sre) who is not the PR author",
	}
}

func allowedReport() *Report {
	created := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	return &Report{
		Project: "streams",
		ChangeSet: &planparse.ChangeSet{Changes: []planparse.Change{
			{Address: addr, StreamPrefix: "create-order", ConsumerGroup: "billing", Action: planparse.ActionScale,
				ShardsBefore: ip(4), ShardsAfter: ip(12), ActionReason: "replace_because_tainted"},
		}},
		Decision: policy.Decision{
			Allowed: true,
			ExceptionsApplied: []policy.ExceptionApplied{{Rule: "shard_delta", Label: "policy-exception/shard_delta", Actor: "alice",
				StreamPrefix: "create-order", ConsumerGroup: "billing", Message: "4 -> 12 shards"}},
			AttestationsUsed: []policy.Attestation{{StreamPrefix: "create-order", Actor: "alice", CreatedAt: created, ExpiresAt: created.Add(2 * time.Hour)}},
		},
		Coordinator: policy.Coordinator{Consulted: true, Reachable: true},
		Rules:       rules,
		LockWaits:   []LockWait{{ID: "5d3c-lock", Who: "bob@laptop", Operation: "OperationTypeApply", Created: created, WaitedSeconds: 42}},
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test ./report -update")
	require.Equal(t, string(want), got)
}

func TestMarkdownGolden(t *testing.T) {
	tests := []struct {
		name string
		r    *Report
	}{
		{"denied.md", deniedReport()},
		{"allowed.md", allowedReport()},
		{"no_changes.md", &Report{ChangeSet: &planparse.ChangeSet{}, Decision: policy.Decision{Allowed: true}}},
		{"unreachable.md", &Report{ChangeSet: &planparse.ChangeSet{}, Coordinator: policy.Coordinator{Consulted: true, Error: "GET /coord/v1/monitoring/groups: connection refused"},
			Decision: policy.Decision{Violations: []policy.Violation{{Rule: "coordinator_unreachable", Message: "live state unknown"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, tt.r.Markdown(0))
		})
	}
}

func TestTextGolden(t *testing.T) {
	golden(t, "denied.txt", deniedReport().Text())
	golden(t, "allowed.txt", allowedReport().Text())
}

func TestJSONShape(t *testing.T) {
	b, err := deniedReport().JSON()
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	for _, k := range []string{"allowed", "changes", "violations", "warnings", "exceptions_applied"} {
		require.Contains(t, got, k)
	}
	require.NotContains(t, got, "state_lock_waits", "check has no state locks")
	require.Equal(t, false, got["allowed"])
	changes := got["changes"].([]any)
	require.Len(t, changes, 3, "noops are not reported")
	first := changes[0].(map[string]any)
	require.Equal(t, 4.0, first["shards_before"])
	require.Equal(t, 16.0, first["shards_after"])
	unmanage := changes[1].(map[string]any)
	require.Nil(t, unmanage["shards_after"])
	require.Contains(t, unmanage, "shards_after", "null, not absent")
	v := got["violations"].([]any)[0].(map[string]any)
	for _, k := range []string{"rule", "stream_prefix", "consumer_group", "message", "waivable", "exception_label"} {
		require.Contains(t, v, k)
	}

	empty := &Report{ChangeSet: &planparse.ChangeSet{}, Decision: policy.Decision{Allowed: true}, LockWaits: []LockWait{}}
	b, err = empty.JSON()
	require.NoError(t, err)
	require.JSONEq(t, `{"allowed":true,"changes":[],"other_changes":[],"violations":[],"warnings":[],"exceptions_applied":[],
		"attestations_used":[],"labels_not_counted":[],"state_lock_waits":[]}`, string(b))
}

func TestMarkdownStaysUnderTheLimit(t *testing.T) {
	r := deniedReport()
	var changes []planparse.Change
	var resources []planparse.ResourceChange
	var violations []policy.Violation
	for i := 0; i < 2000; i++ {
		a := fmt.Sprintf(`module.stream_group["s%04d/g"].terraform_data.stream_group`, i)
		changes = append(changes, planparse.Change{Address: a, StreamPrefix: fmt.Sprintf("s%04d", i), ConsumerGroup: "g",
			Action: planparse.ActionScale, ShardsBefore: ip(2), ShardsAfter: ip(9)})
		resources = append(resources, planparse.ResourceChange{Address: a, Actions: []string{"delete", "create"}, Diff: []string{"input.shard_count: 2 -> 9"}})
		violations = append(violations, policy.Violation{Rule: "shard_delta", StreamPrefix: fmt.Sprintf("s%04d", i), ConsumerGroup: "g",
			Message: "2 -> 9 shards changes by 7 (limit 4)", Waivable: true, ExceptionLabel: "policy-exception/shard_delta"})
	}
	r.ChangeSet = &planparse.ChangeSet{Changes: changes, Resources: resources}
	r.Decision.Violations = violations

	for _, limit := range []int{MaxCommentChars, 20000, 3000} {
		md := r.Markdown(limit)
		require.LessOrEqual(t, len(md), limit)
		require.Contains(t, md, "Denied: 2000 coordinator changes")
		require.Contains(t, md, "not shown to stay under GitHub's comment limit")
		require.Equal(t, strings.Count(md, "<details>"), strings.Count(md, "</details>"))
		require.Equal(t, 0, strings.Count(md, "```")%2, "code fences stay balanced")
	}
	full := r.Markdown(10 << 20)
	require.NotContains(t, full, "not shown")
}

func TestMarkdownIsInert(t *testing.T) {
	evil := "x`|<!-- shardgate --></details>[a](http://e)"
	r := &Report{
		ChangeSet: &planparse.ChangeSet{
			Changes:   []planparse.Change{{Address: "a", StreamPrefix: evil, ConsumerGroup: "g|h", Action: planparse.ActionCreate, ShardsAfter: ip(1)}},
			Resources: []planparse.ResourceChange{{Address: "a```b", Actions: []string{"create"}, Diff: []string{"x: ``` -> y"}}},
		},
		Decision: policy.Decision{Violations: []policy.Violation{{Rule: "r", StreamPrefix: evil, Message: evil}}},
	}
	md := r.Markdown(0)
	require.NotContains(t, md, "<!-- shardgate -->", "the comment marker cannot be forged")
	lines := strings.Split(md, "\n")
	require.Equal(t, 1, countLines(lines, func(l string) bool { return l == "</details>" }))
	require.Equal(t, 2, countLines(lines, func(l string) bool { return l == "````" }), "a fence longer than the name's backticks")
	require.Contains(t, md, `: x\`+"`"+`\|&lt;!-- shardgate -->&lt;/details>\[a\](http:`+mdtext.ZWJ+`//e)`, "plain text is escaped, not a link")
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| Stream") {
			// Unescaped pipes would add columns: 6 separators for 5 cells.
			require.Equal(t, 6, strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"), line)
		}
	}
}

func TestResolution(t *testing.T) {
	r := &Report{Approvers: "@alice"}
	require.NotContains(t, r.Resolution(policy.Violation{Rule: "no_destroy", Waivable: true, ExceptionLabel: "x"}), "@", "approvers are named, not mentioned")
	got := r.Resolution(policy.Violation{Rule: "quiesce_attestation", StreamPrefix: "orders", Waivable: true, ExceptionLabel: "policy-exception/quiesce_attestation"})
	require.Contains(t, got, "'/shardgate attest quiesce orders'")
	require.Contains(t, got, "alice adds the label 'policy-exception/quiesce_attestation'")
	md := r.resolution(policy.Violation{Rule: "quiesce_attestation", StreamPrefix: "a`b", Waivable: true, ExceptionLabel: "policy-exception/quiesce_attestation"}, full.style())
	require.Contains(t, md, "`` /shardgate attest quiesce a`b ``")
	require.Contains(t, md, "adds the label `policy-exception/quiesce_attestation`")
	got = r.Resolution(policy.Violation{Rule: "conflicting_shard_count"})
	require.Contains(t, got, "Not waivable")
	require.NotContains(t, got, "label")
}

func countLines(lines []string, match func(string) bool) int {
	n := 0
	for _, l := range lines {
		if match(l) {
			n++
		}
	}
	return n
}

// marshalIndent is the reference WriteJSON keeps to: encoding/json's own
// indented text of the report, with a newline after. The one difference: a byte
// that is not UTF-8 (never in a parsed plan, which is checked; possible in a
// label or a project name given to check) encoding/json writes as the escape
// \ufffd and WriteJSON as the replacement character itself, which a JSON
// reader takes for the same string.
func marshalIndent(t testing.TB, r *Report) string {
	b, err := json.MarshalIndent(r.jsonValue(), "", "  ")
	require.NoError(t, err)
	return unescapeReplacementChar(string(b)) + "\n"
}

// unescapeReplacementChar writes each \ufffd escape of JSON text as the
// character, leaving every other escape (\\ufffd is a backslash and "ufffd").
func unescapeReplacementChar(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '\\':
			b.WriteByte(s[i])
		case strings.HasPrefix(s[i:], `\ufffd`):
			b.WriteRune('\ufffd')
			i += len(`\ufffd`) - 1
		default:
			b.WriteString(s[i : i+2]) // an escape and the byte it escapes
			i++
		}
	}
	return b.String()
}

// bigReport is a report of n changes and violations, as a large plan gives.
func bigReport(n int) *Report {
	r := deniedReport()
	var changes []planparse.Change
	var violations []policy.Violation
	for i := range n {
		changes = append(changes, planparse.Change{Address: fmt.Sprintf(`module.stream_group["s%05d/g"].terraform_data.stream_group`, i),
			StreamPrefix: fmt.Sprintf("s%05d", i), ConsumerGroup: "g", Action: planparse.ActionScale, ShardsBefore: ip(2), ShardsAfter: ip(9),
			TerraformActions: []string{"update"}})
		violations = append(violations, policy.Violation{Rule: "shard_delta", StreamPrefix: fmt.Sprintf("s%05d", i), ConsumerGroup: "g",
			Message: "2 -> 9 shards changes by 7 (limit 4)", Waivable: true, ExceptionLabel: "policy-exception/shard_delta"})
	}
	r.ChangeSet = &planparse.ChangeSet{Changes: changes}
	r.Decision.Changes = nil
	r.Decision.Violations = violations
	return r
}

// WriteJSON writes what encoding/json's MarshalIndent writes, on every kind of
// report: the JSON report's bytes are what users' scripts and the corpus goldens
// read.
func TestWriteJSONIsMarshalIndent(t *testing.T) {
	odd := deniedReport()
	odd.Project = "<script>&\u2028\u2029 é💥 \x00\x1f\t\"\\ \xff\xfe"
	odd.Decision.Violations[0].Message = "html <a href='x'>&amp;</a> \u2028 \xc3\x28 and \\\"quotes\\\""
	odd.Coordinator = policy.Coordinator{Consulted: true, Reachable: false, Error: "dial tcp: i/o timeout <>&"}
	odd.LockWaits = []LockWait{
		{ID: "lock-1", Who: "ci@host", Operation: "OperationTypeApply", Created: time.Date(2026, 12, 4, 9, 30, 1, 123456789, time.UTC), WaitedSeconds: 12.5},
		{ID: "lock-2", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -7*3600)), WaitedSeconds: 1e21},
		{ID: "lock-3", WaitedSeconds: 1e-7},
		{ID: "lock-4", WaitedSeconds: math.SmallestNonzeroFloat64},
		{ID: "lock-5", WaitedSeconds: 123456789.25},
	}
	empty := &Report{ChangeSet: &planparse.ChangeSet{}, Decision: policy.Decision{Allowed: true}, LockWaits: []LockWait{}}
	for name, r := range map[string]*Report{
		"denied": deniedReport(), "gate": gateReport(), "empty": empty, "no change set": {},
		"odd strings, coordinator, lock waits": odd, "large": bigReport(3000),
	} {
		var b bytes.Buffer
		require.NoError(t, r.WriteJSON(&b), name)
		require.Equal(t, marshalIndent(t, r), b.String(), name)
		j, err := r.JSON()
		require.NoError(t, err, name)
		require.Equal(t, b.String(), string(j), name)
	}
}

func FuzzWriteJSONIsMarshalIndent(f *testing.F) {
	f.Add("web", "orders", "scale \u2028 <&>", 4, 1.5, true)
	f.Add("\xff", "", "\x00\"\\", -1, 1e300, false)
	f.Add(`\ufffd \\ufffd`, "\xef\xbf\xbd", "a\xffb\\ufffd", 0, -0.0, true)
	f.Fuzz(func(t *testing.T, project, prefix, message string, shards int, waited float64, allowed bool) {
		if math.IsNaN(waited) || math.IsInf(waited, 0) {
			return // encoding/json refuses them; a wait is never one
		}
		r := deniedReport()
		r.Project = project
		r.Decision.Allowed = allowed
		r.ChangeSet.Changes[0].StreamPrefix = prefix
		r.ChangeSet.Changes[0].ShardsAfter = &shards
		r.Decision.Violations[0].Message = message
		r.LockWaits = []LockWait{{ID: prefix, WaitedSeconds: waited}}
		var b bytes.Buffer
		require.NoError(t, r.WriteJSON(&b))
		require.Equal(t, marshalIndent(t, r), b.String())
	})
}

// The report is written as it is encoded, in pieces, never whole: the largest
// write is a small part of a report of several MB.
func TestWriteJSONWritesInPieces(t *testing.T) {
	r := bigReport(20000)
	var w recordingWriter
	require.NoError(t, r.WriteJSON(&w))
	require.Greater(t, w.Len(), 8<<20)
	require.Greater(t, w.writes, 10)
	require.Less(t, w.largest, w.Len()/8, "a write of %d of %d bytes", w.largest, w.Len())
}

// A failed write is an error naming the output, and nothing more is written.
func TestWriteJSONFailedWrite(t *testing.T) {
	w := &recordingWriter{failAfter: 1}
	err := bigReport(20000).WriteJSON(w)
	require.ErrorContains(t, err, "write output: disk full")
	require.Equal(t, 2, w.writes)
}

type recordingWriter struct {
	bytes.Buffer
	writes, largest, failAfter int
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.largest = max(w.largest, len(p))
	if w.failAfter > 0 && w.writes > w.failAfter {
		return 0, errors.New("disk full")
	}
	return w.Buffer.Write(p)
}
