package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/stretchr/testify/require"
)

// loggingTerraform is a terraform binary that appends each command line it is given
// to a log, then becomes the real terraform: every output is terraform's own.
func loggingTerraform(t *testing.T) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	bin = filepath.Join(dir, "terraform")
	log = filepath.Join(dir, "calls.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + tftest.Binary(t) + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	return bin, log
}

// commands are the terraform subcommands logged so far ("version -json", "init", ...).
func commands(t *testing.T, log string) []string {
	t.Helper()
	raw, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for line := range strings.Lines(string(raw)) {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "version" || f[0] == "show":
			// Which flags they got is the point: a text show is never wanted.
			cmd := f[0]
			if len(f) > 1 && f[1] == "-json" {
				cmd += " -json"
			}
			out = append(out, cmd)
		default:
			out = append(out, f[0])
		}
	}
	return out
}

// shardgate plan and the bot run init, plan and show for every job. Terraform's
// version is asked once per binary, not once per job, and the plan is shown once,
// as JSON: the text rendering was never used and cost a whole second `show`.
func TestJobRunsEachTerraformCommandOnce(t *testing.T) {
	bin, log := loggingTerraform(t)
	path, version, err := FindTerraform(bin, "")
	require.NoError(t, err)
	require.NotEmpty(t, version)
	r, err := New(path, WithTempDir(t.TempDir()))
	require.NoError(t, err)
	dir := writeModule(t, `resource "terraform_data" "x" { input = "a" }`)
	ctx := context.Background()

	for range 2 {
		j := newJob(t, r, JobConfig{Dir: dir})
		require.NoError(t, j.Init(ctx))
		_, err := j.Plan(ctx)
		require.NoError(t, err)
		shown, err := j.Show(ctx)
		require.NoError(t, err)
		require.True(t, json.Valid(shown.JSON))
	}
	require.Equal(t, []string{"version -json", "init", "plan", "show -json", "init", "plan", "show -json"}, commands(t, log))

	t.Run("the version is asked again when the binary changes", func(t *testing.T) {
		require.NoError(t, os.WriteFile(log, nil, 0o644))
		_, err := CheckTerraform(path)
		require.NoError(t, err)
		require.Empty(t, commands(t, log), "same binary, same modification time: cached")

		later := time.Now().Add(time.Hour)
		require.NoError(t, os.Chtimes(path, later, later))
		_, err = CheckTerraform(path)
		require.NoError(t, err)
		require.Equal(t, []string{"version -json"}, commands(t, log))
	})

	// Every project names its workspace ("default" when it names none), and a
	// fresh data dir is in "default": selecting it again would cost a whole
	// terraform run. Another data dir's current workspace is still changed.
	t.Run("the workspace is selected only when it is not the current one", func(t *testing.T) {
		require.NoError(t, os.WriteFile(log, nil, 0o644))
		dir := writeModule(t, `resource "terraform_data" "x" { input = terraform.workspace }`)
		dataDir := t.TempDir() // one for all: it records the current workspace
		plan := func(workspace string) string {
			j := newJob(t, r, JobConfig{Dir: dir, DataDir: dataDir, Workspace: workspace})
			require.NoError(t, j.Init(ctx))
			_, err := j.Plan(ctx)
			require.NoError(t, err)
			shown, err := j.Show(ctx)
			require.NoError(t, err)
			return string(shown.JSON)
		}
		require.Contains(t, plan("default"), `"after":{"input":"default"`)
		require.Equal(t, []string{"init", "plan", "show -json"}, commands(t, log))

		require.NoError(t, os.WriteFile(log, nil, 0o644))
		require.Contains(t, plan("w1"), `"after":{"input":"w1"`)
		require.Equal(t, []string{"init", "workspace", "workspace", "plan", "show -json"}, commands(t, log), "select, then new")

		require.NoError(t, os.WriteFile(log, nil, 0o644))
		require.Contains(t, plan("w1"), `"after":{"input":"w1"`, "the data dir is in w1 already")
		require.Equal(t, []string{"init", "plan", "show -json"}, commands(t, log))

		require.NoError(t, os.WriteFile(log, nil, 0o644))
		require.Contains(t, plan("default"), `"after":{"input":"default"`, "back from w1")
		require.Equal(t, []string{"init", "workspace", "plan", "show -json"}, commands(t, log))
	})

	t.Run("the text rendering on demand", func(t *testing.T) {
		require.NoError(t, os.WriteFile(log, nil, 0o644))
		j := newJob(t, r, JobConfig{Dir: dir})
		require.NoError(t, j.Init(ctx))
		_, err := j.Plan(ctx)
		require.NoError(t, err)
		text, err := j.ShowText(ctx)
		require.NoError(t, err)
		require.Contains(t, text, "terraform_data.x will be created")
		require.Equal(t, []string{"init", "plan", "show"}, commands(t, log))
	})
}
