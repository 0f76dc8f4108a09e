package policy

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	policyfiles "github.com/shardgate/shardgate/rego"
)

// wholeQuery evaluates data.shardgate.rules in one query, as the engine did
// before it evaluated the rule packages apart, and returns each package's value
// indexed like e.ids.
func wholeQuery(t *testing.T, e *Engine, req Request) []ast.Object {
	t.Helper()
	modules, err := loadBuiltin(false)
	require.NoError(t, err)
	var dirs []string
	if e.wholeInput {
		dirs = []string{filepath.Join("testdata", "userpolicy")}
	}
	for _, dir := range dirs {
		user, err := loadDir(dir)
		require.NoError(t, err)
		for name, m := range user {
			modules[name] = m
		}
	}
	compiler := policyfiles.NewCompiler()
	compiler.Compile(modules)
	require.False(t, compiler.Failed(), "%v", compiler.Errors)
	pq, err := rego.New(rego.Compiler(compiler), rego.Query("data."+rulesPackage), rego.StrictBuiltinErrors(true)).PrepareForEval(context.Background())
	require.NoError(t, err)
	rs, err := pq.Eval(context.Background(), rego.EvalParsedInput(buildInput(req, judge(req), e.wholeInput)), rego.EvalGenerateJSON(rawTerm))
	require.NoError(t, err)
	require.Len(t, rs, 1)
	all := rs[0].Expressions[0].Value.(*ast.Term).Value.(ast.Object)
	out := make([]ast.Object, len(e.ids))
	for i, id := range e.ids {
		if v := all.Get(ast.StringTerm(id)); v != nil {
			out[i] = v.Value.(ast.Object)
		}
	}
	return out
}

// The rule packages, evaluated one query each and side by side, hold what one
// query over data.shardgate.rules holds, on one core or several.
func TestRulePackagesAreWhatOneQueryHolds(t *testing.T) {
	builtin := newEngine(t)
	user := newEngine(t, WithPolicyDirs(filepath.Join("testdata", "userpolicy")))
	requests := map[string]Request{
		"solo heavy":        checkRequest(soloInstances(1000, "heavy")),
		"denied":            deniedRequest(1000),
		"every finding":     busyRequest(1000),
		"attested, offline": benchRequest(instancesChangeSet(soloInstances(500, "allowed"))),
		"no change":         {ChangeSet: &planparse.ChangeSet{}},
	}
	for _, procs := range []int{1, 4} {
		for name, req := range requests {
			for _, e := range []*Engine{builtin, user} {
				t.Run(fmt.Sprintf("%s/procs=%d/user=%v", name, procs, e.wholeInput), func(t *testing.T) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					got, err := e.evalRules(context.Background(), []rego.EvalOption{rego.EvalParsedInput(buildInput(req, judge(req), e.wholeInput))})
					require.NoError(t, err)
					want := wholeQuery(t, e, req)
					require.Len(t, got, len(want))
					for i := range want {
						require.True(t, (want[i] == nil) == (got[i] == nil), e.ids[i])
						if want[i] != nil {
							require.Zero(t, want[i].Compare(got[i]), "rule %s: %v, want %v", e.ids[i], got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// With several rule packages failing, the error reported is the first
// package's by id, whichever goroutine finished first: the same plan gets the
// same policy_error message.
func TestFirstPackageErrorIsReported(t *testing.T) {
	e := newEngine(t, WithPolicyDirs(filepath.Join("testdata", "twoerrors")))
	req := Request{ChangeSet: changeSet(moduleChange("orders", "billing", planparse.ActionCreate, nil, intp(4)))}
	for _, procs := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for range 20 {
				d, err := e.Evaluate(context.Background(), req)
				require.ErrorContains(t, err, `"first:`)
				require.NotContains(t, err.Error(), "second:")
				require.Equal(t, RulePolicyError, d.Violations[0].Rule)
			}
		})
	}
}

// A result that is not an object, as a rule package's value always is, fails
// the evaluation rather than reading as a package without findings: a change
// in what OPA hands back must deny, not pass every plan.
func TestRuleResultOfAnotherShapeFails(t *testing.T) {
	opts := []rego.EvalOption{rego.EvalGenerateJSON(rawTerm)}
	for query, want := range map[string]string{"7": "not an object", "[1]": "not an object"} {
		pq, err := rego.New(rego.Query(query)).PrepareForEval(context.Background())
		require.NoError(t, err)
		_, err = evalRule(context.Background(), pq, opts)
		require.ErrorContains(t, err, want, query)
	}
	pq, err := rego.New(rego.Query("7")).PrepareForEval(context.Background())
	require.NoError(t, err)
	_, err = evalRule(context.Background(), pq, nil) // values converted to Go: not OPA's
	require.ErrorContains(t, err, "not an OPA value")
}
