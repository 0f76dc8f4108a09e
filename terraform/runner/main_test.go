package runner

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as the sandbox launcher: sandboxed
// jobs in these tests re-execute it (os.Executable) exactly as shardgate
// re-executes itself.
func TestMain(m *testing.M) {
	if code, ok := RunSandboxLauncher(os.Args[1:]); ok {
		os.Exit(code)
	}
	if tmp, ok := os.LookupEnv(envLeaveScratch); ok {
		leaveScratch(tmp)
	}
	os.Exit(m.Run())
}
