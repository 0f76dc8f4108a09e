package policy

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	policyfiles "github.com/shardgate/shardgate/rego"
)

// Rego package paths the engine relies on.
const (
	rulesPackage = "shardgate.rules"
	// builtinPrefix names the embedded modules, so errors and annotations point at
	// the repository's rego/ directory.
	builtinPrefix = "rego/"
)

// isTestFile reports whether a .rego file holds Rego unit tests, which are never
// evaluated on a plan.
func isTestFile(name string) bool {
	return strings.HasSuffix(name, "_test.rego")
}

// loadBuiltin parses the embedded policies; withTests adds their unit tests.
func loadBuiltin(withTests bool) (map[string]*ast.Module, error) {
	entries, err := fs.ReadDir(policyfiles.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("read embedded policies: %w", err)
	}
	modules := make(map[string]*ast.Module, len(entries))
	for _, entry := range entries {
		name := entry.Name()
		if entry.IsDir() || path.Ext(name) != ".rego" || (!withTests && isTestFile(name)) {
			continue
		}
		src, err := fs.ReadFile(policyfiles.FS, name)
		if err != nil {
			return nil, fmt.Errorf("read embedded policy %s: %w", name, err)
		}
		m, err := ast.ParseModuleWithOpts(builtinPrefix+name, string(src), policyfiles.ParserOptions)
		if err != nil {
			return nil, fmt.Errorf("parse embedded policy: %w", err)
		}
		modules[builtinPrefix+name] = m
	}
	return modules, nil
}

// loadDir parses every non-test .rego file under dir, recursively.
func loadDir(dir string) (map[string]*ast.Module, error) {
	modules := make(map[string]*ast.Module)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || filepath.Ext(p) != ".rego" || isTestFile(p) {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m, err := ast.ParseModuleWithOpts(p, string(src), policyfiles.ParserOptions)
		if err != nil {
			return err
		}
		modules[p] = m
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load policy dir %s: %w", dir, err)
	}
	return modules, nil
}

// ruleID returns the rule id a package declares: the last segment of
// shardgate.rules.<id>. ok is false for a package outside shardgate.rules.
func ruleID(pkg *ast.Package) (id string, ok bool, err error) {
	p := pkg.Path
	// Path is data.shardgate.rules.<id>; the first term is `data`.
	if len(p) < 3 || !p[1].Equal(ast.StringTerm("shardgate")) || !p[2].Equal(ast.StringTerm("rules")) {
		return "", false, nil
	}
	if len(p) != 4 {
		return "", false, fmt.Errorf("package %s: rule packages must be %s.<rule id>", pkgName(pkg), rulesPackage)
	}
	s, isString := p[3].Value.(ast.String)
	if !isString || s == "" {
		return "", false, fmt.Errorf("package %s: the rule id must be a name", pkgName(pkg))
	}
	return string(s), true, nil
}

// pkgName prints a package path without its `data.` root.
func pkgName(pkg *ast.Package) string {
	return strings.TrimPrefix(pkg.Path.String(), "data.")
}

// checkUserModules rejects user modules that could change what a built-in rule
// decides: a user rule adding bodies to a helper or a built-in package could widen
// a condition under `not` and so weaken a built-in denial. Under `shardgate`, a
// user may only declare new rule packages; checking the package is enough, since
// a rule (even with a ref head) always lives under its module's package.
func checkUserModules(modules map[string]*ast.Module, builtinIDs map[string]bool) error {
	names := make([]string, 0, len(modules))
	for name := range modules {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		pkg := modules[name].Package
		n := pkgName(pkg)
		if n != "shardgate" && !strings.HasPrefix(n, "shardgate.") {
			continue
		}
		id, isRule, err := ruleID(pkg)
		if err != nil {
			return fmt.Errorf("policy %s: %w", name, err)
		}
		if !isRule {
			return fmt.Errorf("policy %s: package %s is reserved; under shardgate only %s.<rule id> packages may be added", name, n, rulesPackage)
		}
		if builtinIDs[id] || id == RulePolicyError {
			return fmt.Errorf("policy %s: rule id %s is built in; pick another package name", name, id)
		}
	}
	return nil
}
