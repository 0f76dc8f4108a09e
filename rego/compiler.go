package rego

import (
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// ParserOptions parse every policy as Rego v1 with its METADATA annotations.
var ParserOptions = ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1}

// NewCompiler returns the strict Rego v1 compiler that policies, built-in or a
// user's, and their unit tests are compiled with.
func NewCompiler() *ast.Compiler {
	return ast.NewCompiler().
		WithStrict(true).
		WithDefaultRegoVersion(ast.RegoV1).
		WithCapabilities(Capabilities())
}

// Capabilities are OPA's built-ins minus the non-deterministic ones (http.send,
// opa.runtime, time.now_ns, rand.intn, net.lookup_ip_addr, ...): a decision must
// depend on the input document alone, and a policy must not reach the network or
// the process.
func Capabilities() *ast.Capabilities {
	c := ast.CapabilitiesForThisVersion()
	c.Builtins = slices.DeleteFunc(slices.Clone(c.Builtins), func(b *ast.Builtin) bool {
		return b.Nondeterministic
	})
	return c
}
