//go:build linux

package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/stretchr/testify/require"
)

// sandboxRunner is a real runner whose jobs run terraform through the
// launcher (this test binary, see TestMain).
func sandboxRunner(t *testing.T, opts ...Option) *Runner {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	return realRunner(t, append([]Option{WithSandbox(Sandbox{Launcher: self})}, opts...)...)
}

// TestSandboxedPlanCannotReadServerSecrets is the attack of issue 10: a pull
// request's configuration reads the server's files at plan time and would
// put them into names shown on the PR.
func TestSandboxedPlanCannotReadServerSecrets(t *testing.T) {
	const secret = "srv-5ecret-9f8e7d6c5b4a"
	serverDir := t.TempDir() // config, App key, webhook secret, store: all outside the sandbox
	secretFile := filepath.Join(serverDir, "webhook-hmac")
	require.NoError(t, os.WriteFile(secretFile, []byte(secret), 0o600))
	t.Setenv("SHARDGATE_WEBHOOK_SECRET", secret) // in the server's environment
	ctx := context.Background()
	cache := t.TempDir()
	r := sandboxRunner(t, WithPluginCacheDir(cache))

	// Another job of the same server, planned with a sensitive value.
	other := newJob(t, r, JobConfig{Dir: writeModule(t, `variable "pw" {
  type      = string
  sensitive = true
}
resource "terraform_data" "x" { input = var.pw }`), SensitiveVars: map[string]string{"pw": secret}})
	require.NoError(t, other.Init(ctx))
	_, err := other.Plan(ctx)
	require.NoError(t, err)

	reads := []struct{ name, expr string }{
		{"file() of a server secret", fmt.Sprintf("file(%q)", secretFile)},
		{"templatefile() of a server secret", fmt.Sprintf("templatefile(%q, {})", secretFile)},
		{"file() of the server's environment", fmt.Sprintf("file(%q)", "/proc/"+strconv.Itoa(os.Getpid())+"/environ")},
		{"file() of another job's saved plan", fmt.Sprintf("filebase64(%q)", other.PlanFile())},
		{"file() of another job's checkout", fmt.Sprintf("file(%q)", filepath.Join(other.cfg.Dir, "main.tf"))},
	}
	for _, tt := range reads {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeModule(t, `resource "terraform_data" "leak" {
  input = `+tt.expr+`
}`)
			j := newJob(t, r, JobConfig{Dir: dir})
			require.NoError(t, j.Init(ctx))
			_, err := j.Plan(ctx)
			var planErr *PlanError
			require.ErrorAs(t, err, &planErr)
			require.Contains(t, strings.Join(strings.Fields(planErr.Tail), " "), "permission denied")
			for _, s := range []string{err.Error(), planErr.Tail, j.Output()} {
				require.NotContains(t, s, secret)
			}
		})
	}
}

func TestSandboxedJobLifecycle(t *testing.T) {
	const token = "tok-4f9a8b7c6d5e"
	secretFile := filepath.Join(t.TempDir(), "coordinator-credential")
	require.NoError(t, os.WriteFile(secretFile, []byte("coord-pa55word"), 0o600))
	root := t.TempDir() // a checkout: the root module beside a local module
	require.NoError(t, os.MkdirAll(filepath.Join(root, "modules", "m"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "infra"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "modules", "m", "main.tf"), []byte(`variable "v" { type = string }
resource "terraform_data" "x" {
  input = var.v
  provisioner "local-exec" {
    command = "env > ${path.root}/env.txt; cat '`+secretFile+`' > ${path.root}/leaked.txt 2> ${path.root}/denied.txt; true"
  }
}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "infra", "main.tf"), []byte(`variable "token" {
  type      = string
  sensitive = true
}
module "m" {
  source = "../modules/m"
  v      = var.token
}`), 0o644))
	dir := filepath.Join(root, "infra")
	cache := t.TempDir()
	r := sandboxRunner(t, WithPluginCacheDir(cache))
	j := newJob(t, r, JobConfig{Dir: dir, Root: root, SensitiveVars: map[string]string{"token": token}})
	ctx := context.Background()

	require.NoError(t, j.Init(ctx), j.Output())
	changed, err := j.Plan(ctx)
	require.NoError(t, err, j.Output())
	require.True(t, changed)
	text, err := j.ShowText(ctx)
	require.NoError(t, err, j.Output())
	require.Contains(t, text, "module.m.terraform_data.x will be created")
	require.NoError(t, j.Apply(ctx), j.Output())
	require.Contains(t, j.Output(), "Apply complete!")

	env, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	require.NoError(t, err)
	require.NotContains(t, string(env), SandboxEnv+"=", "the launcher keeps its policy to itself")
	require.Contains(t, string(env), "HOME="+j.scratch)
	require.Contains(t, string(env), "TMPDIR="+j.scratch)
	leaked, err := os.ReadFile(filepath.Join(dir, "leaked.txt"))
	require.NoError(t, err)
	require.Empty(t, string(leaked), "a provisioner cannot read the server's files")
	denied, err := os.ReadFile(filepath.Join(dir, "denied.txt"))
	require.NoError(t, err)
	require.Contains(t, string(denied), "Permission denied")
}

func TestSandboxRequiresSupport(t *testing.T) {
	old := landlockABI
	t.Cleanup(func() { landlockABI = old })
	landlockABI = func() (int, error) { return 2, nil }
	self, err := os.Executable()
	require.NoError(t, err)
	_, err = New(tftest.Binary(t), WithSandbox(Sandbox{Launcher: self}))
	require.ErrorContains(t, err, "sandbox: this kernel offers Landlock ABI 2")
	_, err = New(tftest.Binary(t), WithSandbox(Sandbox{}))
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "launcher"), err.Error())
}

// TestSandboxedApplyInterrupted: cancellation still reaches a confined
// terraform and the provisioner it runs (signals from outside the sandbox
// go in; terraform's own stay inside), and nothing is left behind.
// TestSandboxedApplyInterrupted: an apply cancelled stops on SIGINT, also
// when the launcher runs terraform as the init of a PID namespace and passes
// the signal on.
func TestSandboxedApplyInterrupted(t *testing.T) {
	t.Run("as detected", func(t *testing.T) { testSandboxedApplyInterrupted(t, nil) })
	t.Run("pid namespace", func(t *testing.T) {
		testSandboxedApplyInterrupted(t, &Containment{Mechanism: ContainPIDNamespace, Reason: "this test's host without cgroups"})
	})
}

func testSandboxedApplyInterrupted(t *testing.T, contain *Containment) {
	dir := writeModule(t, `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "touch started && sleep 20"
  }
}`)
	tmp := t.TempDir()
	r := sandboxRunner(t, WithTempDir(tmp), WithGracePeriod(15*time.Second))
	if contain != nil {
		r.containment = *contain
	}
	j, err := r.NewJob(JobConfig{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, j.Init(context.Background()), j.Output())
	_, err = j.Plan(context.Background())
	require.NoError(t, err, j.Output())

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitForFile(t, filepath.Join(dir, "started"), 15*time.Second) // inside the provisioner
		cancel()
	}()
	start := time.Now()
	err = j.Apply(ctx)
	cancel()
	var intr *InterruptedError
	require.ErrorAs(t, err, &intr)
	require.False(t, intr.Killed, "terraform stopped on SIGINT: %s", j.Output())
	require.FileExists(t, filepath.Join(dir, "started"))
	require.Contains(t, j.Output(), "Interrupt received")
	require.Less(t, time.Since(start), 15*time.Second)
	require.NoError(t, j.Close())
	requireEmptyDir(t, tmp)
}
