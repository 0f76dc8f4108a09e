package runner

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// secretModule takes a sensitive variable (with a default, so that another
// operator's plain terraform can apply it) and holds the state lock for a
// second while applying.
const secretModule = `variable "token" {
  type      = string
  sensitive = true
  default   = "none"
}
resource "terraform_data" "x" {
  input = var.token
  provisioner "local-exec" {
    command = "sleep 1"
  }
}
`

const scratchSecret = "coord-pw-7c6b5a4f3e2d"

// requireMode checks path's permission bits.
func requireMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, want, st.Mode().Perm(), path)
}

// requireEmptyDir checks that nothing is left in dir.
func requireEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "left behind in %s", dir)
}

func TestScratchIsPrivateAndRemoved(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	r := realRunner(t, WithTempDir(tmp))
	sensitive := map[string]string{"token": scratchSecret}

	t.Run("plan, apply, close", func(t *testing.T) {
		dir := writeModule(t, secretModule)
		j, err := r.NewJob(JobConfig{Dir: dir, DataDir: t.TempDir(), SensitiveVars: sensitive})
		require.NoError(t, err)
		requireMode(t, j.scratch, 0o700)
		require.NoError(t, j.Init(ctx))
		_, err = j.Plan(ctx)
		require.NoError(t, err)
		requireMode(t, j.PlanFile(), 0o600)
		require.NoFileExists(t, j.varFile, "the variable file lives only while terraform plans")
		require.NoError(t, j.Apply(ctx))
		require.NoFileExists(t, j.PlanFile(), "the saved plan (which holds the secret) is gone once applied")
		require.NoError(t, j.Close())
		require.NoDirExists(t, j.scratch)
		requireEmptyDir(t, tmp)
	})
	t.Run("a plan file of the caller's is private too", func(t *testing.T) {
		dir := writeModule(t, secretModule)
		j, err := r.NewJob(JobConfig{Dir: dir, DataDir: t.TempDir(), SensitiveVars: sensitive, PlanFile: "out.tfplan"})
		require.NoError(t, err)
		require.NoError(t, j.Init(ctx))
		_, err = j.Plan(ctx)
		require.NoError(t, err)
		requireMode(t, filepath.Join(dir, "out.tfplan"), 0o600)
		require.NoError(t, j.Close())
		requireEmptyDir(t, tmp)
	})
	t.Run("a failed plan", func(t *testing.T) {
		dir := writeModule(t, `variable "token" { type = string }
resource "terraform_data" "x" { input = tonumber(var.token) }`)
		j, err := r.NewJob(JobConfig{Dir: dir, DataDir: t.TempDir(), SensitiveVars: sensitive})
		require.NoError(t, err)
		require.NoError(t, j.Init(ctx))
		_, err = j.Plan(ctx)
		require.Error(t, err)
		require.NoFileExists(t, j.varFile)
		require.NoFileExists(t, j.PlanFile(), "no empty plan file is left to apply")
		require.ErrorContains(t, j.Apply(ctx), "no plan file")
		require.NoError(t, j.Close())
		requireEmptyDir(t, tmp)
	})
	t.Run("a cancelled plan", func(t *testing.T) {
		dir := writeModule(t, secretModule)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		j, err := r.NewJob(JobConfig{Dir: dir, DataDir: t.TempDir(), SensitiveVars: sensitive,
			Wait:       &WaitPolicy{Timeout: time.Minute, InitialBackoff: time.Second, MaxBackoff: time.Second},
			OnLockWait: func(LockWait) { cancel() }})
		require.NoError(t, err)
		require.NoError(t, j.Init(ctx))
		startHolder(t, dir)
		_, err = j.Plan(cctx)
		require.ErrorIs(t, err, context.Canceled)
		require.NoFileExists(t, j.varFile)
		require.NoError(t, j.Close())
		requireEmptyDir(t, tmp)
	})
	t.Run("a job that cannot be made", func(t *testing.T) {
		_, err := r.NewJob(JobConfig{Dir: t.TempDir(), Env: map[string]string{"TF_INPUT": "1"}, SensitiveVars: sensitive})
		require.Error(t, err)
		_, err = r.NewJob(JobConfig{Dir: t.TempDir(), Root: t.TempDir()})
		require.ErrorContains(t, err, "is not inside")
		requireEmptyDir(t, tmp)
	})
}

// TestSweepScratch: a shardgate killed with -9 cannot clean up; the next
// start removes what it left, and never a live job's scratch.
func TestSweepScratch(t *testing.T) {
	tmp := t.TempDir()
	r := realRunner(t, WithTempDir(tmp))
	live, err := r.NewJob(JobConfig{Dir: t.TempDir(), SensitiveVars: map[string]string{"token": scratchSecret}})
	require.NoError(t, err)
	defer live.Close()

	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), envLeaveScratch+"="+tmp)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	dead := strings.TrimSpace(line)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.DirExists(t, dead, "kill -9 left the scratch dir behind")
	require.NotEqual(t, live.scratch, dead)

	removed, err := r.SweepScratch()
	require.NoError(t, err)
	require.Equal(t, []string{dead}, removed)
	require.NoDirExists(t, dead)
	require.DirExists(t, live.scratch, "a live job's scratch is kept")
}

// envLeaveScratch makes the test binary (see TestMain) a shardgate that
// makes a job in the given temp dir, says where, and waits to be killed.
const envLeaveScratch = "SHARDGATE_TEST_LEAVE_SCRATCH"

func leaveScratch(tmp string) {
	bin := filepath.Join(tmp, "..", "terraform-stand-in")
	_ = os.WriteFile(bin, nil, 0o755)
	r, err := New(bin, WithTempDir(tmp))
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(tmp), "module-")
	if err != nil {
		panic(err)
	}
	j, err := r.NewJob(JobConfig{Dir: dir, SensitiveVars: map[string]string{"token": scratchSecret}})
	if err != nil {
		panic(err)
	}
	os.Stdout.WriteString(j.scratch + "\n")
	time.Sleep(time.Hour) // until the test kills it
}
