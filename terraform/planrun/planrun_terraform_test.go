package planrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/terraform/runner"
)

func realRunner(t *testing.T) *runner.Runner {
	t.Helper()
	r, err := runner.New(tftest.Binary(t), runner.WithTempDir(t.TempDir()))
	require.NoError(t, err)
	return r
}

func checkout(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return root
}

// A project's plan becomes a change set; a module beside the project (in
// the checkout, outside its dir) is read.
func TestRunPlansAProject(t *testing.T) {
	root := checkout(t, map[string]string{
		"modules/m/main.tf": `variable "n" {}` + "\n" + `resource "terraform_data" "x" { input = var.n }`,
		"live/main.tf":      `module "m" {` + "\n" + `source = "../modules/m"` + "\n" + `n = var.n` + "\n}\n" + `variable "n" {}`,
		"live/prod.tfvars":  `n = 3`,
	})
	res := Run(context.Background(), realRunner(t), Request{Checkout: root, Commit: "0123456789abcdef",
		Project: repoconfig.Project{Name: "live", Dir: "live", Workspace: "default", VarFiles: []string{"prod.tfvars"}}})
	require.False(t, res.Failed(), res.Error)
	require.Equal(t, filepath.Join(root, "live"), res.Dir)
	require.NotNil(t, res.ChangeSet)
	require.Empty(t, res.ChangeSet.Changes, "no coordinator resource in this plan")
	require.Len(t, res.ChangeSet.OtherChanges, 1)
	require.Equal(t, "module.m.terraform_data.x", res.ChangeSet.OtherChanges[0].Address)
}

// Terraform's errors are the result, with its diagnostics, and with the
// job's secrets removed; a project whose dir is missing says at which commit.
func TestRunFailuresAreData(t *testing.T) {
	const secret = "plan-env-secret-value-1234"
	root := checkout(t, map[string]string{
		"bad/main.tf": `resource "terraform_data" "x" { input = file("/nonexistent/` + secret + `") }`,
	})
	res := Run(context.Background(), realRunner(t), Request{Checkout: root, SecretEnv: map[string]string{"TF_VAR_unused": secret},
		Project: repoconfig.Project{Name: "bad", Dir: "bad", Workspace: "default"}})
	require.True(t, res.Failed())
	require.NotEmpty(t, res.Diagnostics, "terraform's diagnostics are kept")
	require.NotContains(t, res.Error, secret)
	for _, d := range res.Diagnostics {
		require.NotContains(t, d.Summary+d.Detail+d.Snippet+d.Context, secret)
	}

	res = Run(context.Background(), realRunner(t), Request{Checkout: root, Commit: "0123456789abcdef0123",
		Project: repoconfig.Project{Name: "gone", Dir: "gone", Workspace: "default"}})
	require.True(t, res.Failed())
	require.True(t, strings.HasPrefix(res.Error, `project "gone": directory gone does not exist at 0123456`), res.Error)
}

// A plan reaches the coordinators only through a read-only broker: the
// plan's own environment (read with file()) has the broker, never a
// coordinator credential.
func TestRunPlansWithoutCoordinatorCredentials(t *testing.T) {
	const password = "plan-phase-Secret-pw"
	root := checkout(t, map[string]string{
		"live/main.tf": `output "environ" { value = replace(file("/proc/self/environ"), "\u0000", "\n") }`,
	})
	var out strings.Builder
	res := Run(context.Background(), realRunner(t), Request{Checkout: root, Output: &out,
		Project:      repoconfig.Project{Name: "live", Dir: "live", Workspace: "default"},
		Coordinators: []coordbroker.Coordinator{{URL: "http://coordinator.example:8080", Username: "terraform", Password: password}}})
	require.False(t, res.Failed(), res.Error)
	require.Contains(t, out.String(), "HTTPS_PROXY=http://job:", "the probe read the plan's environment")
	require.NotContains(t, out.String(), password)
}
