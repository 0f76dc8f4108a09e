package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary confine terraform as the shardgate binary
// does: the demo's service re-executes os.Executable() as the sandbox
// launcher, and main's first step is launchSandboxed.
func TestMain(m *testing.M) {
	if code, launched := launchSandboxed(os.Args[1:]); launched {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
