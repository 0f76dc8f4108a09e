package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// A partial backend gets its settings at init: a backend file and a
// key=value from the project's init arguments, and a secret setting from a
// private file in the job's scratch that is gone after init and never on a
// command line or in the output. The project's plan arguments reach plan.
func TestPartialBackendAndProjectArguments(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, bin string) {
		states := t.TempDir()
		dir := writeModule(t, `terraform {
  backend "local" {}
}
resource "terraform_data" "x" {
  input = "x"
}
`)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "prod.backend.hcl"), []byte("workspace_dir = \""+filepath.Join(states, "ws")+"\"\n"), 0o644))
		secretPath := filepath.Join(states, "secret-prod.tfstate")
		r := realRunnerOn(t, bin)
		j := newJob(t, r, JobConfig{Dir: dir, InitArgs: []string{"-backend-config=prod.backend.hcl"},
			PlanArgs: []string{"-refresh=false"}, SecretBackendConfig: map[string]string{"path": secretPath}})
		ctx := context.Background()
		require.NoError(t, j.Init(ctx))
		require.NotContains(t, j.Output(), secretPath)
		_, err := os.Stat(j.backendFile)
		require.ErrorIs(t, err, os.ErrNotExist, "the secret backend settings are removed after init")
		require.Contains(t, j.planArgs(0), "-refresh=false")
		changed, err := j.Plan(ctx)
		require.NoError(t, err)
		require.True(t, changed)
		require.NoError(t, j.Apply(ctx))
		require.FileExists(t, secretPath, "the state is where the secret setting put it")
	})
}
