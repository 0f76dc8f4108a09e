// Package rego holds shardgate's built-in Rego policies, embedded so the binary
// needs no policy files at run time. The policy package compiles them; the
// `*_test.rego` files are Rego unit tests and are never evaluated on a plan.
package rego

import "embed"

// FS holds every built-in policy and its unit tests.
//
//go:embed *.rego
var FS embed.FS
