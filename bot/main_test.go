package bot

import (
	"os"
	"testing"

	"github.com/shardgate/shardgate/terraform/runner"
)

// TestMain lets the test binary serve as the sandbox launcher, as the
// shardgate binary does (bot.New confines terraform by re-executing
// os.Executable()).
func TestMain(m *testing.M) {
	if code, ok := runner.RunSandboxLauncher(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
