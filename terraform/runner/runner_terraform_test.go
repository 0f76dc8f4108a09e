package runner

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/ samples of terraform output")

// realRunner is a Runner on the real terraform binary.
func realRunner(t *testing.T, opts ...Option) *Runner {
	t.Helper()
	return realRunnerOn(t, tftest.Binary(t), opts...)
}

// realRunnerOn is a Runner on bin, terraform or tofu (tftest.EachBinary).
func realRunnerOn(t *testing.T, bin string, opts ...Option) *Runner {
	t.Helper()
	r, err := New(bin, append([]Option{WithTempDir(t.TempDir())}, opts...)...)
	require.NoError(t, err)
	return r
}

// writeModule writes main.tf into a fresh directory.
func writeModule(t *testing.T, mainTF string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF), 0o644))
	return dir
}

// newJob makes a job on dir with its own data dir, closed at cleanup.
func newJob(t *testing.T, r *Runner, cfg JobConfig) *Job {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	j, err := r.NewJob(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, j.Close()) })
	return j
}

// terraformCmd is terraform run outside the runner, as another operator would.
func terraformCmd(t *testing.T, dir, dataDir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(tftest.Binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_DATA_DIR="+dataDir, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	return cmd
}

func runTerraform(t *testing.T, dir, dataDir string, args ...string) {
	t.Helper()
	runBinary(t, tftest.Binary(t), dir, dataDir, args...)
}

// runBinary is runTerraform with bin, terraform or tofu.
func runBinary(t *testing.T, bin, dir, dataDir string, args ...string) {
	t.Helper()
	cmd := terraformCmd(t, dir, dataDir, args...)
	cmd.Path, cmd.Args[0] = bin, bin
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v: %s", bin, args, out)
}

// requireNoGoroutineLeak waits a little for goroutines to wind down to base.
func requireNoGoroutineLeak(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), base, "goroutines left running")
}

const plainModule = `
variable "token" {
  type = string
}
variable "label" {
  type    = string
  default = "none"
}
resource "terraform_data" "x" {
  input = "${var.label}-${var.token}"
  provisioner "local-exec" {
    command = "env > env.txt"
  }
}
`

func TestJobLifecycle(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, bin string) {
		const secret = "tok-4f9a8b7c6d5e"
		t.Setenv("SHARDGATE_LEAK_CHECK", "must-not-reach-terraform")
		// A CLI configuration that is missing makes both warn; OpenTofu does
		// so on stdout, before show's JSON.
		t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(t.TempDir(), "missing.tfrc"))
		dir := writeModule(t, plainModule)
		r := realRunnerOn(t, bin)
		j := newJob(t, r, JobConfig{Dir: dir, Vars: map[string]string{"label": "blue"}, SensitiveVars: map[string]string{"token": secret}})
		ctx := context.Background()

		require.NoError(t, j.Init(ctx))
		changed, err := j.Plan(ctx)
		require.NoError(t, err)
		require.True(t, changed)
		require.NotContains(t, j.Output(), secret)

		shown, err := j.Show(ctx)
		require.NoError(t, err)
		require.True(t, json.Valid(shown.JSON))
		require.Contains(t, string(shown.JSON), secret, "JSON is the raw plan for the decision engine")
		plan, err := shown.Plan()
		require.NoError(t, err)
		require.Len(t, plan.ResourceChanges, 1)
		require.Equal(t, "terraform_data.x", plan.ResourceChanges[0].Address)
		text, err := j.ShowText(ctx)
		require.NoError(t, err)
		require.Contains(t, text, "terraform_data.x will be created")
		require.Contains(t, text, "blue-[REDACTED]")
		require.NotContains(t, text, secret)

		require.NoError(t, j.Apply(ctx))
		require.NotContains(t, j.Output(), secret)
		require.Contains(t, j.Output(), "Apply complete!")
		require.Empty(t, j.LockWaits())

		env, err := os.ReadFile(filepath.Join(dir, "env.txt"))
		require.NoError(t, err)
		require.Contains(t, string(env), "TF_IN_AUTOMATION=1")
		require.Contains(t, string(env), "CHECKPOINT_DISABLE=1")
		require.NotContains(t, string(env), "SHARDGATE_LEAK_CHECK", "only allow-listed variables reach terraform")

		t.Run("nothing to change", func(t *testing.T) {
			changed, err := j.Plan(ctx)
			require.NoError(t, err)
			require.False(t, changed)
		})
	})
}

func TestJobWorkspace(t *testing.T) {
	dir := writeModule(t, `resource "terraform_data" "x" {}`)
	j := newJob(t, realRunner(t), JobConfig{Dir: dir, Workspace: "feature-1"})
	require.NoError(t, j.Init(context.Background()))
	_, err := os.Stat(filepath.Join(dir, "terraform.tfstate.d", "feature-1"))
	require.NoError(t, err, "workspace created on first use")
	// Selecting it again takes the existing one.
	require.NoError(t, j.Init(context.Background()))
}

func TestJobFailures(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, bin string) {
		ctx := context.Background()
		t.Run("invalid configuration is an InitError with the tail", func(t *testing.T) {
			dir := writeModule(t, `resource "terraform_data" "x" { nonsense = 1 `)
			err := newJob(t, realRunnerOn(t, bin), JobConfig{Dir: dir}).Init(ctx)
			var initErr *InitError
			require.ErrorAs(t, err, &initErr)
			require.Equal(t, 1, initErr.ExitCode)
			require.Contains(t, initErr.Tail, "Error:")
		})
		t.Run("a plan error says what failed, secrets hidden", func(t *testing.T) {
			dir := writeModule(t, `variable "pw" { type = string }
	resource "terraform_data" "x" { input = tonumber(var.pw) }`)
			j := newJob(t, realRunnerOn(t, bin), JobConfig{Dir: dir, SensitiveVars: map[string]string{"pw": "not-a-number-pw"}})
			require.NoError(t, j.Init(ctx))
			_, err := j.Plan(ctx)
			var planErr *PlanError
			require.ErrorAs(t, err, &planErr)
			require.Contains(t, err.Error(), "terraform plan failed (exit 1)")
			require.NotContains(t, err.Error()+planErr.Tail, "not-a-number-pw")
		})
		t.Run("apply without a plan", func(t *testing.T) {
			j := newJob(t, realRunnerOn(t, bin), JobConfig{Dir: writeModule(t, `resource "terraform_data" "x" {}`)})
			require.ErrorContains(t, j.Apply(ctx), "no plan file")
		})
	})
}

func TestStalePlan(t *testing.T) {
	tftest.EachBinary(t, func(t *testing.T, bin string) {
		ctx := context.Background()
		dir := writeModule(t, `resource "terraform_data" "x" {}`)
		r := realRunnerOn(t, bin)
		mine := newJob(t, r, JobConfig{Dir: dir})
		require.NoError(t, mine.Init(ctx))
		_, err := mine.Plan(ctx)
		require.NoError(t, err)

		// Someone else applies first and the state moves on.
		other := t.TempDir()
		runBinary(t, bin, dir, other, "init", "-input=false", "-no-color")
		runBinary(t, bin, dir, other, "apply", "-auto-approve", "-input=false", "-no-color")

		err = mine.Apply(ctx)
		var stale *StalePlanError
		require.ErrorAs(t, err, &stale)
		require.Equal(t, "Saved plan is stale", stale.Reason)
		require.Contains(t, err.Error(), "plan again")
		if *update {
			require.NoError(t, os.WriteFile("testdata/stale_plan.txt", []byte(stale.Tail), 0o644))
		}
	})
}

func TestApplyInterrupted(t *testing.T) {
	const slow = `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "sleep 20"
  }
}`
	tests := []struct {
		name       string
		grace      time.Duration
		wantKilled bool
		wantMsg    string
	}{
		{name: "stops on SIGINT", grace: 15 * time.Second, wantMsg: "terraform apply interrupted (context canceled): terraform stopped after SIGINT"},
		{name: "killed after the grace period", grace: time.Millisecond, wantKilled: true, wantMsg: "was killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeModule(t, slow)
			j := newJob(t, realRunner(t, WithGracePeriod(tt.grace)), JobConfig{Dir: dir})
			require.NoError(t, j.Init(context.Background()))
			_, err := j.Plan(context.Background())
			require.NoError(t, err)

			base := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				waitForFile(t, filepath.Join(dir, ".terraform.tfstate.lock.info"), 15*time.Second)
				time.Sleep(time.Second) // inside the local-exec
				cancel()
			}()
			start := time.Now()
			err = j.Apply(ctx)
			cancel()
			var intr *InterruptedError
			require.ErrorAs(t, err, &intr)
			require.ErrorIs(t, err, context.Canceled)
			require.True(t, intr.Started)
			require.Equal(t, tt.wantKilled, intr.Killed)
			require.Contains(t, err.Error(), tt.wantMsg)
			require.Less(t, time.Since(start), 15*time.Second, "terraform did not wait for the sleep")
			requireNoGoroutineLeak(t, base)
		})
	}
}

// waitForFile polls for path; it is safe to call from any goroutine.
func waitForFile(t *testing.T, path string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("%s did not appear within %s", path, timeout)
	return false
}

func TestFindTerraformReal(t *testing.T) {
	bin := tftest.Binary(t)
	path, version, err := FindTerraform(bin, "")
	require.NoError(t, err)
	require.Equal(t, bin, path)
	ok, err := versionAtLeast(version, MinVersion)
	require.NoError(t, err)
	require.True(t, ok)

	t.Run("repo bin dir before PATH", func(t *testing.T) {
		base := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(base, "bin"), 0o755))
		require.NoError(t, os.Symlink(bin, filepath.Join(base, "bin", "terraform")))
		t.Setenv("PATH", t.TempDir())
		path, _, err := FindTerraform("", base)
		require.NoError(t, err)
		require.Equal(t, filepath.Join(base, "bin", "terraform"), path)
	})
	t.Run("then PATH", func(t *testing.T) {
		pathDir := t.TempDir()
		require.NoError(t, os.Symlink(bin, filepath.Join(pathDir, "terraform")))
		t.Setenv("PATH", pathDir)
		path, _, err := FindTerraform("", t.TempDir())
		require.NoError(t, err)
		require.Equal(t, filepath.Join(pathDir, "terraform"), path)
	})
}

func TestParallelJobsShareThePluginCache(t *testing.T) {
	cache := t.TempDir()
	r := realRunner(t, WithPluginCacheDir(cache))
	errs := make(chan error, 3)
	for range 3 {
		j := newJob(t, r, JobConfig{Dir: writeModule(t, `resource "terraform_data" "x" {}`)})
		go func() {
			err := j.Init(context.Background())
			if err == nil {
				_, err = j.Plan(context.Background())
			}
			errs <- err
		}()
	}
	for range 3 {
		require.NoError(t, <-errs)
	}
	_, err := os.Stat(filepath.Join(cache, cacheLockName))
	require.NoError(t, err, "inits took the cache lock")
}
