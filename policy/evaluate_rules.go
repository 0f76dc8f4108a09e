package policy

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Rule packages are evaluated one query each (data.shardgate.rules.<id>) and
// side by side, on up to GOMAXPROCS goroutines: `shardgate check` evaluates after
// the parse, with every core idle but one, and on a plan of one stream per
// instance a single rule (quiesce_attestation) is most of the evaluation. A
// package's value is what data.shardgate.rules holds under its id, so the
// findings are those of one query over every package.

// costFirst are the built-in rules that cost most on large plans, costliest
// first (measured on the bench's 10,000-instance shapes): each goroutine takes
// the next package of this order, so the long ones start first.
var costFirst = []string{RuleQuiesceAttestation, RuleShardDelta, RuleTaintedReplace, RuleUnknownValue, RuleNoDestroy, RuleInvalidShardCount}

// ruleQuery is one rule package's prepared query.
type ruleQuery struct {
	id    string
	query rego.PreparedEvalQuery
}

// prepareRuleQueries prepares one query per rule id (ids sorted) and returns
// them sorted by id, with the order to start them in.
func prepareRuleQueries(ctx context.Context, compiler *ast.Compiler, ids []string) ([]ruleQuery, []int, error) {
	queries := make([]ruleQuery, len(ids))
	for i, id := range ids {
		ref := ast.MustParseRef("data." + rulesPackage).Append(ast.StringTerm(id))
		// No rego.Runtime: policies see the input document and nothing of the process.
		pq, err := rego.New(
			rego.Compiler(compiler),
			rego.ParsedQuery(ast.NewBody(ast.NewExpr(ast.NewTerm(ref)))),
			rego.StrictBuiltinErrors(true),
		).PrepareForEval(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("prepare policy query: %w", err)
		}
		queries[i] = ruleQuery{id: id, query: pq}
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	rank := func(i int) int {
		if r := slices.Index(costFirst, ids[i]); r >= 0 {
			return r
		}
		return len(costFirst)
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank(a) - rank(b) })
	return queries, order, nil
}

// rawTerm keeps a result as OPA computed it: the findings are read from the AST
// (evaluate.go), not from a Go copy of every rule's value.
func rawTerm(t *ast.Term, _ *rego.EvalContext) (any, error) { return t, nil }

// evalRules evaluates every rule package on input and returns each package's
// value, indexed like e.queries; nil where the package is undefined (it holds no
// value). With errors in several packages, the one returned is the first
// package's by id, whatever finished first.
func (e *Engine) evalRules(ctx context.Context, opts []rego.EvalOption) ([]ast.Object, error) {
	values := make([]ast.Object, len(e.queries))
	errs := make([]error, len(e.queries))
	opts = append(slices.Clip(opts), rego.EvalGenerateJSON(rawTerm))
	var next atomic.Int32
	work := func() {
		for {
			n := int(next.Add(1)) - 1
			if n >= len(e.order) {
				return
			}
			i := e.order[n]
			values[i], errs[i] = evalRule(ctx, e.queries[i].query, opts)
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(e.queries)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return values, nil
}

// evalRule evaluates one package's query: nil when the package is undefined.
// Any other value than an object, or one not in OPA's terms, is an error: read
// as a package without findings, it would pass every plan.
func evalRule(ctx context.Context, q rego.PreparedEvalQuery, opts []rego.EvalOption) (ast.Object, error) {
	rs, err := q.Eval(ctx, opts...)
	if err != nil || len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, err
	}
	t, ok := rs[0].Expressions[0].Value.(*ast.Term)
	if !ok {
		return nil, fmt.Errorf("rule package value %T is not an OPA value", rs[0].Expressions[0].Value)
	}
	obj, ok := t.Value.(ast.Object)
	if !ok {
		return nil, fmt.Errorf("rule package value is not an object: %s", ast.ValueName(t.Value))
	}
	return obj, nil
}
