package rego_test

import (
	"context"
	"io/fs"
	"path"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/stretchr/testify/require"

	policyfiles "github.com/shardgate/shardgate/rego"
)

// minRegoTests guards against tests silently not running (a renamed package, a
// file left out of the embed): raise it when adding tests.
const minRegoTests = 93

// TestRegoUnitTests runs every `test_` rule of the embedded policies, compiled
// exactly as the engine compiles them (strict, Rego v1, deterministic built-ins).
func TestRegoUnitTests(t *testing.T) {
	modules := make(map[string]*ast.Module)
	entries, err := fs.ReadDir(policyfiles.FS, ".")
	require.NoError(t, err)
	for _, entry := range entries {
		if path.Ext(entry.Name()) != ".rego" {
			continue
		}
		src, err := fs.ReadFile(policyfiles.FS, entry.Name())
		require.NoError(t, err)
		m, err := ast.ParseModuleWithOpts(entry.Name(), string(src), policyfiles.ParserOptions)
		require.NoError(t, err)
		modules[entry.Name()] = m
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results, err := tester.NewRunner().
		SetCompiler(policyfiles.NewCompiler()).
		SetModules(modules).
		RaiseBuiltinErrors(true).
		RunTests(ctx, nil)
	require.NoError(t, err)

	ran := 0
	for r := range results {
		ran++
		name := r.Package + "." + r.Name
		if r.Error != nil {
			t.Errorf("%s: error: %v", name, r.Error)
			continue
		}
		if r.Fail {
			t.Errorf("%s (%v): failed", name, r.Location)
		}
	}
	require.GreaterOrEqual(t, ran, minRegoTests, "too few Rego tests ran")
}
