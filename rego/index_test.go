package rego_test

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/stretchr/testify/require"

	policyfiles "github.com/shardgate/shardgate/rego"
)

// TestQuiesceAddressesAreIndexed fails when the comprehension listing a
// stream's scales in quiesce_attestation's deny is no longer indexed by OPA
// (e.g. `c.stream == stream` for `c.stream = stream`): each unattested stream
// would then cost a scan or a function call, and on a plan of one stream per
// instance that rule is most of the evaluation (issue 37).
func TestQuiesceAddressesAreIndexed(t *testing.T) {
	modules := make(map[string]*ast.Module)
	entries, err := fs.ReadDir(policyfiles.FS, ".")
	require.NoError(t, err)
	for _, entry := range entries {
		name := entry.Name()
		if path.Ext(name) != ".rego" || strings.HasSuffix(name, "_test.rego") {
			continue
		}
		src, err := fs.ReadFile(policyfiles.FS, name)
		require.NoError(t, err)
		m, err := ast.ParseModuleWithOpts(name, string(src), policyfiles.ParserOptions)
		require.NoError(t, err)
		modules[name] = m
	}
	compiler := policyfiles.NewCompiler()
	compiler.Compile(modules)
	require.False(t, compiler.Failed(), "%v", compiler.Errors)

	var keys []string
	for _, rule := range compiler.Modules["quiesce_attestation.rego"].Rules {
		if rule.Head.Name != "deny" {
			continue
		}
		ast.WalkTerms(rule.Body, func(term *ast.Term) bool {
			if _, ok := term.Value.(*ast.ArrayComprehension); ok {
				index := compiler.ComprehensionIndex(term)
				require.NotNil(t, index, "the comprehension %v is not indexed", term)
				for _, k := range index.Keys {
					keys = append(keys, k.String())
				}
			}
			return false
		})
	}
	require.Len(t, keys, 1, "one indexed comprehension, on one key")
}
