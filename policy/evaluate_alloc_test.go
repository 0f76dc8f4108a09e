package policy

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/stretchr/testify/require"
)

// The findings of a denied plan become the decision's violations in lists
// sized once, and the violations no exception label waives stay where they
// are: grown a finding at a time, then copied, they were ~1.4 MB of garbage
// on the 10,000-instance plan of one stream per instance (issue 37).
func TestViolationsAreListedInPlace(t *testing.T) {
	e, err := New()
	require.NoError(t, err)
	req := checkRequest(soloInstances(2000, "heavy"))
	opts := []rego.EvalOption{rego.EvalParsedInput(buildInput(req, judge(req), e.wholeInput))}
	packages, err := e.evalRules(context.Background(), opts)
	require.NoError(t, err)

	var read float64 // what reading the findings allocates, which collect adds to
	for i, id := range e.ids {
		read += testing.AllocsPerRun(3, func() {
			_, _ = findings(id, "deny", packages[i])
			_, _ = findings(id, "warn", packages[i])
		})
	}
	violations, _, err := e.collect(packages)
	require.NoError(t, err)
	require.Greater(t, len(violations), 300, "the plan is denied many times over")
	collected := testing.AllocsPerRun(3, func() { _, _, _ = e.collect(packages) })
	require.LessOrEqual(t, collected-read, 4.0, "collect grows its lists as it fills them")

	kept := testing.AllocsPerRun(3, func() { applyExceptions(violations, nil) })
	require.Zero(t, kept, "with no exception label the violations are copied")
	got, applied := applyExceptions(violations, []Label{{Name: "policy-exception/shard_delta", Counted: true}})
	require.NotEmpty(t, applied)
	for _, v := range got {
		require.NotEqual(t, RuleShardDelta, v.Rule, "a waived violation is moved out")
	}
	require.Len(t, got, len(violations)-len(applied))
}
