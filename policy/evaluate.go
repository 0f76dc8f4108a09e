package policy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/shardgate/shardgate/planparse"
)

// Evaluate runs every rule on one request. It first judges the effect of every
// change on the coordinator (Decision.Changes), then evaluates the rules on it.
// It fails closed: when the policies cannot be evaluated, or a rule yields a
// finding of an unexpected shape, the error comes back together with a Decision
// that denies with a policy_error violation (and still reports the changes).
func (e *Engine) Evaluate(ctx context.Context, req Request) (Decision, error) {
	return e.evaluate(ctx, req)
}

// evaluate is Evaluate with extra evaluation options, so a test can count the
// work of an evaluation.
func (e *Engine) evaluate(ctx context.Context, req Request, opts ...rego.EvalOption) (Decision, error) {
	if req.ChangeSet == nil {
		return failClosed(nil, errors.New("evaluate policies: no change set"))
	}
	j := judge(req)
	// OPA notices cancellation asynchronously, so a small plan could still pass
	// under a context that is already done.
	if err := ctx.Err(); err != nil {
		return failClosed(j.changes, fmt.Errorf("evaluate policies: %w", err))
	}
	if req.Now.IsZero() && len(req.Attestations) > 0 {
		// Without a time no attestation can be judged fresh; guessing either way
		// would be wrong.
		return failClosed(j.changes, errors.New("evaluate policies: attestations given without the time to judge their freshness"))
	}
	opts = append([]rego.EvalOption{rego.EvalParsedInput(buildInput(req, j, e.wholeInput))}, opts...)
	packages, err := e.evalRules(ctx, opts)
	if err != nil {
		return failClosed(j.changes, fmt.Errorf("evaluate policies: %w", err))
	}
	violations, warnings, err := e.collect(packages)
	if err != nil {
		return failClosed(j.changes, err)
	}
	used, err := e.attestationsUsed(req, packages)
	if err != nil {
		return failClosed(j.changes, err)
	}
	d := Decision{
		Changes:          nonNil(j.changes),
		Warnings:         nonNil(sortWarnings(warnings)),
		AttestationsUsed: nonNil(used),
		LabelsNotCounted: nonNil(e.labelsNotCounted(req.Labels)),
	}
	kept, applied := applyExceptions(sortViolations(violations), req.Labels)
	d.Violations, d.ExceptionsApplied = nonNil(kept), nonNil(applied)
	d.Allowed = len(d.Violations) == 0
	return d, nil
}

// collect reads every rule package's deny and warn sets; packages are indexed
// like e.ids.
func (e *Engine) collect(packages []ast.Object) ([]Violation, []Warning, error) {
	// Read first, so that the lists are sized once: grown as they were filled,
	// they left as much garbage as they hold.
	denied, warned := make([][]finding, len(e.ids)), make([][]finding, len(e.ids))
	nd, nw := 0, 0
	for i, id := range e.ids {
		var err error
		if denied[i], err = findings(id, "deny", packages[i]); err != nil {
			return nil, nil, err
		}
		if warned[i], err = findings(id, "warn", packages[i]); err != nil {
			return nil, nil, err
		}
		nd, nw = nd+len(denied[i]), nw+len(warned[i])
	}
	violations, warnings := make([]Violation, 0, nd), make([]Warning, 0, nw)
	for i, id := range e.ids {
		denies, warns := denied[i], warned[i]
		info := e.rules[id]
		for _, f := range denies {
			violations = append(violations, Violation{
				Rule: id, Title: info.Title, Stream: f.Stream, StreamPrefix: f.StreamPrefix, ConsumerGroup: f.ConsumerGroup,
				Address: f.Address, Message: f.Message, Waivable: info.Waivable, ExceptionLabel: info.ExceptionLabel,
			})
		}
		for _, f := range warns {
			warnings = append(warnings, Warning{
				Rule: id, Title: info.Title, Stream: f.Stream, StreamPrefix: f.StreamPrefix, ConsumerGroup: f.ConsumerGroup,
				Address: f.Address, Message: f.Message,
			})
		}
	}
	return violations, warnings, nil
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// failClosed is the decision returned with every evaluation error. The judged
// changes are still reported: a denied plan's report shows what it would do.
func failClosed(changes []planparse.Change, err error) (Decision, error) {
	return Decision{
		Allowed:           false,
		Changes:           nonNil(changes),
		Warnings:          []Warning{},
		ExceptionsApplied: []ExceptionApplied{},
		AttestationsUsed:  []Attestation{},
		LabelsNotCounted:  []Label{},
		Violations: []Violation{{
			Rule:    RulePolicyError,
			Title:   "Policy error",
			Message: "the policies could not be evaluated, so the plan is denied: " + err.Error(),
		}},
	}, err
}

// finding is one deny or warn value of a rule.
type finding struct {
	Message, Stream, StreamPrefix, ConsumerGroup, Address string
}

// findings reads a rule package's deny or warn set. A value that is not an object
// with a string msg is an error, not something to skip: skipping would let a broken
// rule pass every plan.
func findings(id, set string, pkg ast.Object) ([]finding, error) {
	values, err := members(pkg, set)
	if err != nil {
		return nil, fmt.Errorf("evaluate rule %s: %w", id, err)
	}
	out := make([]finding, 0, len(values))
	for _, v := range values {
		obj, ok := v.Value.(ast.Object)
		if !ok {
			return nil, fmt.Errorf("evaluate rule %s: %s value is not an object", id, set)
		}
		var f finding
		var err error
		if f.Message, err = field(obj, "msg", true); err != nil {
			return nil, fmt.Errorf("evaluate rule %s: %s value: %w", id, set, err)
		}
		for _, opt := range []struct {
			key string
			dst *string
		}{{"stream", &f.Stream}, {"stream_prefix", &f.StreamPrefix}, {"consumer_group", &f.ConsumerGroup}, {"address", &f.Address}} {
			if *opt.dst, err = field(obj, opt.key, false); err != nil {
				return nil, fmt.Errorf("evaluate rule %s: %s value: %w", id, set, err)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// members are the values of a package's set rule: nil when the package or the
// rule is undefined. An array is read as a set, as it was when the results came
// as JSON, where both are lists.
func members(pkg ast.Object, set string) ([]*ast.Term, error) {
	if pkg == nil {
		return nil, nil
	}
	raw := pkg.Get(ast.InternedTerm(set))
	if raw == nil {
		return nil, nil
	}
	switch v := raw.Value.(type) {
	case ast.Set:
		return v.Slice(), nil
	case *ast.Array:
		out := make([]*ast.Term, v.Len())
		for i := range out {
			out[i] = v.Elem(i)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is not a set", set)
}

func field(obj ast.Object, key string, required bool) (string, error) {
	raw := obj.Get(ast.InternedTerm(key))
	if raw == nil {
		if required {
			return "", fmt.Errorf("missing %q", key)
		}
		return "", nil
	}
	s, ok := raw.Value.(ast.String)
	if !ok {
		return "", fmt.Errorf("%q is not a string", key)
	}
	if required && strings.TrimSpace(string(s)) == "" {
		return "", fmt.Errorf("%q is empty", key)
	}
	return string(s), nil
}

// attestationsUsed are the fresh attestations behind the prefixes that the
// quiesce_attestation rule found attested.
func (e *Engine) attestationsUsed(req Request, packages []ast.Object) ([]Attestation, error) {
	i, found := slices.BinarySearch(e.ids, RuleQuiesceAttestation)
	if !found {
		return nil, nil
	}
	values, err := members(packages[i], "attested")
	if err != nil {
		return nil, fmt.Errorf("evaluate rule %s: %w", RuleQuiesceAttestation, err)
	}
	if values == nil {
		return nil, nil
	}
	attested := make(map[string]bool, len(values))
	for _, v := range values {
		if s, ok := v.Value.(ast.String); ok {
			attested[string(s)] = true
		}
	}
	var used []Attestation
	for _, a := range req.Attestations {
		if attested[a.StreamPrefix] && a.ExpiresAt.After(req.Now) {
			used = append(used, a)
		}
	}
	slices.SortFunc(used, func(a, b Attestation) int {
		return cmp.Or(cmp.Compare(a.StreamPrefix, b.StreamPrefix), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.Actor, b.Actor))
	})
	return used, nil
}

// applyExceptions moves the violations of waivable rules whose exception label is
// counted on the pull request out of the violations, in place: the violations
// kept are the start of the slice given (a copy of 1,600 findings was ~0.7 MB
// of garbage on a 10,000-instance plan).
func applyExceptions(violations []Violation, labels []Label) ([]Violation, []ExceptionApplied) {
	counted := make(map[string]Label)
	for _, l := range labels {
		if l.Counted {
			counted[l.Name] = l
		}
	}
	kept := violations[:0]
	var applied []ExceptionApplied
	for _, v := range violations {
		l, ok := counted[v.ExceptionLabel]
		if !v.Waivable || v.ExceptionLabel == "" || !ok {
			kept = append(kept, v)
			continue
		}
		applied = append(applied, ExceptionApplied{
			Rule: v.Rule, Label: l.Name, Actor: l.Actor, Stream: v.Stream,
			StreamPrefix: v.StreamPrefix, ConsumerGroup: v.ConsumerGroup, Message: v.Message,
		})
	}
	return kept, applied
}

// labelsNotCounted are the exception labels on the pull request that do not count,
// including counted ones that name a rule that cannot be waived: the author of the
// label should hear that it changes nothing.
func (e *Engine) labelsNotCounted(labels []Label) []Label {
	var out []Label
	for _, l := range labels {
		id, isException := strings.CutPrefix(l.Name, ExceptionLabelPrefix)
		if !isException {
			continue
		}
		if !l.Counted {
			out = append(out, l)
			continue
		}
		if info, known := e.rules[id]; known && !info.Waivable {
			l.Counted = false
			l.Reason = "rule " + id + " cannot be waived"
			out = append(out, l)
		}
	}
	slices.SortStableFunc(out, func(a, b Label) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func sortViolations(vs []Violation) []Violation {
	slices.SortFunc(vs, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.StreamPrefix, b.StreamPrefix), cmp.Compare(a.Stream, b.Stream),
			cmp.Compare(a.ConsumerGroup, b.ConsumerGroup), cmp.Compare(a.Address, b.Address), cmp.Compare(a.Message, b.Message))
	})
	return vs
}

func sortWarnings(ws []Warning) []Warning {
	slices.SortFunc(ws, func(a, b Warning) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.StreamPrefix, b.StreamPrefix), cmp.Compare(a.Stream, b.Stream),
			cmp.Compare(a.ConsumerGroup, b.ConsumerGroup), cmp.Compare(a.Address, b.Address), cmp.Compare(a.Message, b.Message))
	})
	return ws
}
