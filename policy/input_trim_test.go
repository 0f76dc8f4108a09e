package policy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// trimShapes are requests of every shape the built-in rules judge: the bench's
// grouped and one-stream-per-instance plans, every kind of finding, conflicting
// desired counts (with peers), and streams of one prefix on two coordinators,
// whose names the messages spell out.
func trimShapes() map[string]Request {
	shapes := map[string]Request{
		"denied":       deniedRequest(2000),
		"busy":         busyRequest(2000),
		"allowed":      benchRequest(instancesChangeSet(planparsetest.Instances(2000, 10, 0))),
		"solo-denied":  checkRequest(soloInstances(2000, "denied")),
		"solo-heavy":   checkRequest(soloInstances(2000, "heavy")),
		"solo-allowed": checkRequest(soloInstances(2000, "allowed")),
	}
	allowed := shapes["solo-allowed"]
	for _, c := range allowed.ChangeSet.Changes {
		if c.Action == planparse.ActionScale {
			allowed.Attestations = append(allowed.Attestations, attestation(c.StreamPrefix, now.Add(time.Hour)))
		}
	}
	shapes["solo-allowed"] = allowed

	// Two coordinators, one prefix: the names carry the coordinator; one of
	// them with credentials in its URL, which a name never shows.
	a := onCoordinator(scaleChange("orders", "billing", 4, 12), coordA)
	b := onCoordinator(scaleChange("orders", "audit", 8, 10), coordB)
	creds := onCoordinator(scaleChange("orders", "search", 2, 4), "http://user:secret@coordinator-c:8080")
	lone := onCoordinator(scaleChange("payments", "ledger", 4, 6), coordA)
	noCoord := scaleChange("orders", "reports", 4, 6)
	noCoord.Stream = "orders"
	idle := onCoordinator(moduleChange("idle", "g", planparse.ActionNoop, intp(4), intp(4)), coordA)
	shared := changeSet(a, b, creds, lone, noCoord, idle)
	shared.Desired = append(shared.Desired,
		planparse.Desired{Address: "module.x", StreamPrefix: "orders", Coordinator: coordA, Stream: a.Stream, ShardCount: 7},
		planparse.Desired{Address: "module.y", StreamPrefix: "payments", Coordinator: coordA, Stream: lone.Stream, ShardCount: 9},
	)
	shapes["shared prefix, conflicting counts"] = Request{
		ChangeSet: shared, Now: now,
		Coordinator: Coordinator{Consulted: true, Reachable: true},
		Live:        liveOn(coordA, "orders", LiveGroup{ConsumerGroup: "billing", ShardCount: 4, State: "STABLE", ActiveMigrationID: "m1", MigrationState: "ACTIVE"}),
		Peers: []planparse.Desired{
			{Address: "project `ledger`: module.audit", StreamPrefix: "orders", Coordinator: coordB, Stream: b.Stream, ShardCount: 3},
			{Address: "project `ledger`: module.other", StreamPrefix: "inventory", ShardCount: 3},
			{Address: "project `ledger`: module.other2", StreamPrefix: "inventory", ShardCount: 5},
		},
	}
	return shapes
}

// With only the built-in policies loaded, the input leaves out what no built-in
// rule reads (trimInput): every shape must still get the very decision the
// whole input gives, findings, messages and changes alike.
func TestBuiltinInputDecidesAsTheWholeInput(t *testing.T) {
	e, err := New()
	require.NoError(t, err)
	require.False(t, e.wholeInput, "only built-in policies: the trimmed input")
	whole := *e
	whole.wholeInput = true
	for name, req := range trimShapes() {
		t.Run(name, func(t *testing.T) {
			want, err := whole.Evaluate(context.Background(), req)
			require.NoError(t, err)
			got, err := e.Evaluate(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, want, got)
			if !strings.HasSuffix(name, "allowed") {
				require.NotEmpty(t, want.Violations, "a shape with findings")
			}
		})
	}
}

// The trimmed input does leave out the streams with one desired count and the
// unchanged streams whose names are their prefixes, so the test above compares
// two inputs that differ.
func TestBuiltinInputIsTrimmed(t *testing.T) {
	solo := checkRequest(soloInstances(2000, "heavy"))
	in := buildInput(solo, judge(solo), false).(ast.Object)
	require.Zero(t, in.Get(ast.StringTerm(inputDesired)).Value.(ast.Object).Len(), "no stream asked for two counts")
	require.Equal(t, in.Get(ast.StringTerm(inputChangesByStream)).Value.(ast.Object).Len(), in.Get(ast.StringTerm(inputStreams)).Value.(ast.Object).Len(),
		"the streams of the changes, of 2,000")

	req := trimShapes()["shared prefix, conflicting counts"]
	in = buildInput(req, judge(req), false).(ast.Object)
	desired := in.Get(ast.StringTerm(inputDesired)).Value.(ast.Object)
	require.ElementsMatch(t, []*ast.Term{
		ast.StringTerm(planparse.StreamKey(coordA, "orders")), ast.StringTerm(planparse.StreamKey(coordB, "orders")),
		ast.StringTerm(planparse.StreamKey(coordA, "payments")), ast.StringTerm("inventory"),
	}, desired.Keys(),
		"only the streams asked for more than one count")
	streams := in.Get(ast.StringTerm(inputStreams)).Value.(ast.Object)
	require.ElementsMatch(t, []*ast.Term{
		ast.StringTerm(planparse.StreamKey(coordA, "orders")), ast.StringTerm(planparse.StreamKey(coordB, "orders")),
		ast.StringTerm(planparse.StreamKey("http://user:secret@coordinator-c:8080", "orders")), ast.StringTerm("orders"),
		ast.StringTerm(planparse.StreamKey(coordA, "payments")),
	}, streams.Keys(), "only the streams the input names elsewhere and those whose name is not their prefix")
	wholeIn := buildInput(req, judge(req), true).(ast.Object)
	for _, key := range streams.Keys() {
		require.True(t, streams.Get(key).Equal(wholeIn.Get(ast.StringTerm(inputStreams)).Value.(ast.Object).Get(key)), "%v as in the whole input", key)
	}
	for _, key := range desired.Keys() {
		require.True(t, desired.Get(key).Equal(wholeIn.Get(ast.StringTerm(inputDesired)).Value.(ast.Object).Get(key)), "%v as in the whole input", key)
	}
}

// A user policy may read any part of the input: with one loaded, the input is
// whole.
func TestUserPoliciesGetTheWholeInput(t *testing.T) {
	e, err := New(WithPolicyDirs("testdata/otherchanges"))
	require.NoError(t, err)
	require.True(t, e.wholeInput)
}

// On a plan of one stream per instance, the evaluation allocates little per
// stream: OPA's objects for the streams' desired counts and names were most of
// it (issue 37).
func TestEvaluateAllocatesLittlePerSoloStream(t *testing.T) {
	e, err := New()
	require.NoError(t, err)
	const n = 2000
	req := checkRequest(soloInstances(n, "heavy"))
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := e.Evaluate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	})
	perStream := allocs / n
	t.Logf("Evaluate: %.1f allocations per stream", perStream)
	require.LessOrEqual(t, perStream, 23.0, "the evaluation allocates per stream (41.6 before the trimmed input)")
}
