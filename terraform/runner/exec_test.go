package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// testRunner is a Runner over a file that is never executed.
func testRunner(t *testing.T, procEnv map[string]string, opts ...Option) *Runner {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "terraform")
	require.NoError(t, os.WriteFile(bin, nil, 0o755))
	r, err := New(bin, append([]Option{WithTempDir(t.TempDir())}, opts...)...)
	require.NoError(t, err)
	r.lookupEnv = func(k string) (string, bool) { v, ok := procEnv[k]; return v, ok }
	r.environ = func() []string {
		var out []string
		for k, v := range procEnv {
			out = append(out, k+"="+v)
		}
		return out
	}
	return r
}

func TestJobEnv(t *testing.T) {
	procEnv := map[string]string{
		"PATH": "/usr/bin", "HOME": "/home/bot", "HTTPS_PROXY": "http://proxy:3128",
		"GITHUB_TOKEN": "ghs_not_for_terraform", "AWS_SECRET_ACCESS_KEY": "nope", "AWS_PROFILE": "ops",
		"TF_CLI_CONFIG_FILE": "/home/bot/.terraformrc", "TF_VAR_region": "eu-west-1", "TF_LOG": "TRACE",
		SandboxEnv: `{"exec":"/bin/sh"}`,
	}
	tests := []struct {
		name          string
		opts          []Option
		cfg           JobConfig
		wantEnv       map[string]string
		wantVars      map[string]string
		wantSensitive map[string]string
		wantErr       string
	}{
		{
			name: "only allow-listed process variables",
			cfg:  JobConfig{DataDir: "/data"},
			wantEnv: map[string]string{"PATH": "/usr/bin", "HOME": "/home/bot", "HTTPS_PROXY": "http://proxy:3128",
				"TF_CLI_CONFIG_FILE": "/home/bot/.terraformrc", "TF_DATA_DIR": "/data", "CHECKPOINT_DISABLE": "1"},
		},
		{
			name: "extra pass-through, runner and job values, plugin cache",
			opts: []Option{WithPassEnv("AWS_PROFILE"), WithEnv(map[string]string{"PGUSER": "bot"}), WithPluginCacheDir("/cache")},
			cfg:  JobConfig{DataDir: "/data", Env: map[string]string{"PGUSER": "job", "AWS_REGION": "eu-west-1"}},
			wantEnv: map[string]string{"PATH": "/usr/bin", "HOME": "/home/bot", "HTTPS_PROXY": "http://proxy:3128",
				"AWS_PROFILE": "ops", "PGUSER": "job", "AWS_REGION": "eu-west-1", "TF_CLI_CONFIG_FILE": "/home/bot/.terraformrc",
				"TF_DATA_DIR": "/data", "CHECKPOINT_DISABLE": "1", "TF_PLUGIN_CACHE_DIR": "/cache"},
		},
		{
			name: "TF_VAR entries become variables, secret ones sensitive",
			cfg: JobConfig{DataDir: "/d", Vars: map[string]string{"a": "1", "pw": "plain?"},
				Env:       map[string]string{"TF_VAR_b": "2"},
				SecretEnv: map[string]string{"TF_VAR_pw": "s3cret", "PGPASSWORD": "pgpw"}},
			wantEnv: map[string]string{"PATH": "/usr/bin", "HOME": "/home/bot", "HTTPS_PROXY": "http://proxy:3128",
				"PGPASSWORD": "pgpw", "TF_CLI_CONFIG_FILE": "/home/bot/.terraformrc", "TF_DATA_DIR": "/d", "CHECKPOINT_DISABLE": "1"},
			wantVars:      map[string]string{"a": "1", "b": "2"},
			wantSensitive: map[string]string{"pw": "s3cret"},
		},
		{
			name: "the caller's whole environment with WithInheritEnv, but what tfexec and the runner manage",
			opts: []Option{WithInheritEnv()},
			cfg:  JobConfig{DataDir: "/data"},
			wantEnv: map[string]string{"PATH": "/usr/bin", "HOME": "/home/bot", "HTTPS_PROXY": "http://proxy:3128",
				"GITHUB_TOKEN": "ghs_not_for_terraform", "AWS_SECRET_ACCESS_KEY": "nope", "AWS_PROFILE": "ops",
				"TF_CLI_CONFIG_FILE": "/home/bot/.terraformrc", "TF_DATA_DIR": "/data", "CHECKPOINT_DISABLE": "1"},
			wantVars: map[string]string{"region": "eu-west-1"},
		},
		{
			name: "registry-only runners write their own CLI config",
			opts: []Option{WithRegistryProvidersOnly()},
			cfg:  JobConfig{DataDir: "/data"},
			wantEnv: map[string]string{"PATH": "/usr/bin", "HOME": "/home/bot", "HTTPS_PROXY": "http://proxy:3128",
				"TF_DATA_DIR": "/data", "CHECKPOINT_DISABLE": "1"},
		},
		{
			name:    "registry-only runners refuse a CLI config",
			opts:    []Option{WithRegistryProvidersOnly()},
			cfg:     JobConfig{Env: map[string]string{"TF_CLI_CONFIG_FILE": "/x.tfrc"}},
			wantErr: "environment variables managed by the runner: TF_CLI_CONFIG_FILE (use WithRegistryProvidersOnly)",
		},
		{
			name:    "variables tfexec or the runner manage are refused",
			cfg:     JobConfig{Env: map[string]string{"TF_LOG": "TRACE", "TF_WORKSPACE": "x", "TF_DATA_DIR": "/x", "TF_CLI_ARGS_plan": "-lock=false"}},
			wantErr: "environment variables managed by the runner: TF_CLI_ARGS_plan, TF_DATA_DIR (use JobConfig.DataDir), TF_LOG, TF_WORKSPACE",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRunner(t, procEnv, tt.opts...)
			env, vars, sensitive, err := r.jobEnv(tt.cfg)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantEnv, env)
			if tt.wantVars == nil {
				tt.wantVars = map[string]string{}
			}
			if tt.wantSensitive == nil {
				tt.wantSensitive = map[string]string{}
			}
			require.Equal(t, tt.wantVars, vars)
			require.Equal(t, tt.wantSensitive, sensitive)
		})
	}
}

func TestNewJobArguments(t *testing.T) {
	r := testRunner(t, map[string]string{"PATH": "/bin"})
	dir := t.TempDir()
	j, err := r.NewJob(JobConfig{
		Dir:           dir,
		VarFiles:      []string{"prod.tfvars"},
		Vars:          map[string]string{"b": "2", "a": "1"},
		SensitiveVars: map[string]string{"db_password": "hunter2-long"},
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, j.Close()) })

	require.Equal(t, []string{"plan", "-no-color", "-input=false", "-detailed-exitcode",
		"-lock-timeout=2.5s", "-out=" + j.PlanFile(),
		"-var-file=prod.tfvars", "-var-file=" + j.varFile,
		"-lock=true", "-parallelism=10", "-refresh=true",
		"-var", "a=1", "-var", "b=2",
	}, j.planArgs(2500e6))

	t.Run("sensitive variables are in a private file, not on the command line", func(t *testing.T) {
		require.NoFileExists(t, j.varFile, "written only while terraform plans")
		done, err := j.beforePlan()
		require.NoError(t, err)
		st, err := os.Stat(j.varFile)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		b, err := os.ReadFile(j.varFile)
		require.NoError(t, err)
		require.JSONEq(t, `{"db_password":"hunter2-long"}`, string(b))
		require.NotContains(t, fmt.Sprint(j.planArgs(0)), "hunter2-long")
		done(errors.New("plan failed"))
		require.NoFileExists(t, j.varFile)
	})
	t.Run("sensitive values are redacted", func(t *testing.T) {
		require.Equal(t, "pw [REDACTED]", j.Redact("pw hunter2-long"))
	})
	t.Run("data dir defaults inside the module dir", func(t *testing.T) {
		require.Equal(t, filepath.Join(dir, ".terraform"), j.env["TF_DATA_DIR"])
	})
	t.Run("a relative plan file is in the module dir", func(t *testing.T) {
		j2, err := r.NewJob(JobConfig{Dir: dir, PlanFile: "out.tfplan"})
		require.NoError(t, err)
		require.NoError(t, j2.Close())
		require.Equal(t, filepath.Join(dir, "out.tfplan"), j2.PlanFile())
	})
	t.Run("close removes the scratch dir", func(t *testing.T) {
		j2, err := r.NewJob(JobConfig{Dir: dir})
		require.NoError(t, err)
		require.NoError(t, j2.Close())
		_, err = os.Stat(filepath.Dir(j2.PlanFile()))
		require.True(t, os.IsNotExist(err))
	})
}

func TestNewJobErrors(t *testing.T) {
	r := testRunner(t, nil)
	_, err := r.NewJob(JobConfig{Dir: filepath.Join(t.TempDir(), "missing")})
	require.ErrorContains(t, err, "is not a directory")
	_, err = r.NewJob(JobConfig{Dir: t.TempDir(), Env: map[string]string{"TF_INPUT": "1"}})
	require.ErrorContains(t, err, "managed by the runner: TF_INPUT")
	_, err = New("")
	var binErr *BinaryError
	require.ErrorAs(t, err, &binErr)
}

func TestClassify(t *testing.T) {
	r := testRunner(t, nil)
	j, err := r.NewJob(JobConfig{Dir: t.TempDir(), SensitiveVars: map[string]string{"pw": "topsecret"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	exitErr := exec.Command("false").Run()
	require.Error(t, exitErr)
	// tfexec appends terraform's stderr to its error text.
	raw := fmt.Errorf("%w\nError: boom topsecret", exitErr)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	lockOut, err := os.ReadFile("testdata/lock_local_1.5.7.txt")
	require.NoError(t, err)
	staleOut, err := os.ReadFile("testdata/stale_plan.txt")
	require.NoError(t, err)

	tests := []struct {
		name    string
		ctx     context.Context
		command string
		tail    string
		err     error // default: raw
		check   func(t *testing.T, err error)
	}{
		{name: "interrupted", ctx: cancelled, command: "apply", check: func(t *testing.T, err error) {
			var e *InterruptedError
			require.ErrorAs(t, err, &e)
			require.ErrorIs(t, err, context.Canceled)
			require.EqualError(t, err, "terraform apply interrupted (context canceled): terraform stopped after SIGINT")
		}},
		{name: "interrupted before terraform started", ctx: cancelled, command: "plan", err: context.Canceled, check: func(t *testing.T, err error) {
			var e *InterruptedError
			require.ErrorAs(t, err, &e)
			require.EqualError(t, err, "terraform plan interrupted (context canceled): terraform was not started")
		}},
		{name: "state lock", command: "plan", tail: string(lockOut), check: func(t *testing.T, err error) {
			var e *StateLockError
			require.ErrorAs(t, err, &e)
			require.Equal(t, "plan", e.Command)
		}},
		{name: "stale plan", command: "apply", tail: string(staleOut), check: func(t *testing.T, err error) {
			var e *StalePlanError
			require.ErrorAs(t, err, &e)
			require.Equal(t, j.PlanFile(), e.PlanFile)
		}},
		{name: "stale text from a plan is just a plan error", command: "plan", tail: "Error: Saved plan is stale\n", check: func(t *testing.T, err error) {
			var e *PlanError
			require.ErrorAs(t, err, &e)
		}},
		{name: "init", command: "init", tail: "Error: Failed to query available provider packages\n", check: func(t *testing.T, err error) {
			var e *InitError
			require.ErrorAs(t, err, &e)
			require.Equal(t, 1, e.ExitCode)
			require.EqualError(t, err, "terraform init failed (exit 1): Failed to query available provider packages")
		}},
		{name: "apply failure keeps tail, drops raw stderr", command: "apply", tail: "[REDACTED] ok\nError: boom\n", check: func(t *testing.T, err error) {
			var e *ApplyError
			require.ErrorAs(t, err, &e)
			require.NotContains(t, err.Error(), "topsecret")
			require.NotContains(t, errors.Unwrap(err).Error(), "topsecret")
			require.Equal(t, "[REDACTED] ok\nError: boom\n", e.Tail)
		}},
		{name: "show", command: "show", check: func(t *testing.T, err error) {
			var e *ShowError
			require.ErrorAs(t, err, &e)
			require.EqualError(t, err, "terraform show failed (exit 1): exit status 1")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if tt.err == nil {
				tt.err = raw
			}
			tt.check(t, j.classify(ctx, tt.command, tt.err, tt.tail))
		})
	}
	t.Run("non-exit errors keep only their first line, redacted", func(t *testing.T) {
		err := j.classify(context.Background(), "plan", errors.New("start: topsecret\nmore topsecret"), "")
		require.EqualError(t, err, "terraform plan failed: start: [REDACTED]")
	})
}

func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		v    string
		want bool
		err  bool
	}{
		{v: "1.5.7", want: true}, {v: "1.5.0", want: true}, {v: "1.11.4", want: true}, {v: "2.0.0", want: true},
		{v: "1.4.6"}, {v: "0.15.5"}, {v: "v1.6.0-alpha1", want: true}, {v: "1.5", err: true}, {v: "x.y.z", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.v, func(t *testing.T) {
			got, err := versionAtLeast(tt.v, MinVersion)
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
