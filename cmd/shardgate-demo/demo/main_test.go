package demo

import (
	"os"
	"testing"

	"github.com/shardgate/shardgate/terraform/runner"
)

// TestMain lets the test binary confine terraform as the shardgate binary
// does: the demo's service re-executes os.Executable() as the sandbox
// launcher.
func TestMain(m *testing.M) {
	if code, launched := runner.RunSandboxLauncher(os.Args[1:]); launched {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
