package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"

	policyfiles "github.com/shardgate/shardgate/rego"
)

// Engine evaluates shardgate's policies. It is immutable after New and safe for
// concurrent use.
type Engine struct {
	queries []ruleQuery // one per rule package, sorted by id (evaluate_rules.go)
	order   []int       // indexes of queries, in the order to start them
	rules   map[string]RuleInfo
	ids     []string // sorted
	// wholeInput is set when a policy other than the built-in ones is loaded:
	// it may read any part of the input, which is then written whole; the
	// built-in rules alone get the trimmed input (input_trimmed.go).
	wholeInput bool
}

type options struct {
	dirs        []string
	skipBuiltin bool
}

// Option configures New.
type Option func(*options)

// WithPolicyDirs adds user policy directories, loaded (recursively) in addition to
// the built-in policies. Files not ending in .rego are ignored, and `_test.rego`
// files are never evaluated.
func WithPolicyDirs(dirs ...string) Option {
	return func(o *options) { o.dirs = append(o.dirs, dirs...) }
}

// WithoutBuiltin leaves out the built-in policies, so a test can evaluate user
// policies alone.
func WithoutBuiltin() Option {
	return func(o *options) { o.skipBuiltin = true }
}

// New loads, compiles (strict, Rego v1) and prepares the policies once.
func New(opts ...Option) (*Engine, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}

	modules := make(map[string]*ast.Module)
	builtinIDs := make(map[string]bool)
	wholeInput := o.skipBuiltin
	if !o.skipBuiltin {
		builtin, err := loadBuiltin(false)
		if err != nil {
			return nil, err
		}
		for name, m := range builtin {
			if id, isRule, _ := ruleID(m.Package); isRule {
				builtinIDs[id] = true
			}
			modules[name] = m
		}
	}
	seenDirs := make(map[string]bool)
	for _, dir := range o.dirs {
		if seenDirs[filepath.Clean(dir)] {
			continue
		}
		seenDirs[filepath.Clean(dir)] = true
		user, err := loadDir(dir)
		if err != nil {
			return nil, err
		}
		if err := checkUserModules(user, builtinIDs); err != nil {
			return nil, err
		}
		for name, m := range user {
			// A user file must never replace a built-in module of the same name.
			if _, taken := modules[name]; taken {
				return nil, fmt.Errorf("load policy dir %s: %s has the name of a built-in policy", dir, name)
			}
			modules[name] = m
			wholeInput = true
		}
	}
	if len(modules) == 0 {
		return nil, errors.New("no policy files to load")
	}

	compiler := policyfiles.NewCompiler()
	if compiler.Compile(modules); compiler.Failed() {
		return nil, fmt.Errorf("compile policies: %w", compiler.Errors)
	}
	rules, err := ruleInfos(compiler)
	if err != nil {
		return nil, fmt.Errorf("read policy metadata: %w", err)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("no package %s.<rule id> among the policies", rulesPackage)
	}

	ids := slices.Sorted(maps.Keys(rules))
	queries, order, err := prepareRuleQueries(context.Background(), compiler, ids)
	if err != nil {
		return nil, err
	}
	return &Engine{queries: queries, order: order, rules: rules, ids: ids, wholeInput: wholeInput}, nil
}

// Rules lists the loaded rules, sorted by id.
func (e *Engine) Rules() []RuleInfo {
	out := make([]RuleInfo, 0, len(e.ids))
	for _, id := range e.ids {
		out = append(out, e.rules[id])
	}
	return out
}

// Rule returns one rule's metadata.
func (e *Engine) Rule(id string) (RuleInfo, bool) {
	info, ok := e.rules[id]
	return info, ok
}
