package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsolatedJobEnv(t *testing.T) {
	procEnv := map[string]string{"PATH": "/usr/bin", "HOME": "/home/bot", "TF_CLI_CONFIG_FILE": "/home/bot/.terraformrc",
		"SSL_CERT_FILE": "/opt/ca/bundle.pem"}
	root := t.TempDir()
	dir := filepath.Join(root, "infra")
	require.NoError(t, os.Mkdir(dir, 0o755))
	cache := t.TempDir()

	t.Run("registry providers only", func(t *testing.T) {
		r := testRunner(t, procEnv, WithRegistryProvidersOnly())
		j, err := r.NewJob(JobConfig{Dir: dir})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, j.Close()) })
		cli := j.env["TF_CLI_CONFIG_FILE"]
		require.Equal(t, filepath.Join(j.scratch, "terraform.rc"), cli, "never the process's own")
		requireMode(t, cli, 0o600)
		b, err := os.ReadFile(cli)
		require.NoError(t, err)
		require.Contains(t, string(b), "provider_installation {\n  direct {}\n}")
		require.Equal(t, filepath.Join(j.scratch, "data"), j.env["TF_DATA_DIR"], "not the checkout's .terraform")
		requireMode(t, j.env["TF_DATA_DIR"], 0o700)
		require.Equal(t, "/home/bot", j.env["HOME"])
		require.Equal(t, r.bin, j.execPath)
		require.NotContains(t, j.env, SandboxEnv)
	})
	t.Run("sandboxed", func(t *testing.T) {
		launcher := filepath.Join(t.TempDir(), "shardgate")
		require.NoError(t, os.WriteFile(launcher, nil, 0o755))
		r := testRunner(t, procEnv, WithSandbox(Sandbox{Launcher: launcher, ReadOnly: []string{"/opt/extra"}, ReadWrite: []string{"/var/lib/state"}}), WithPluginCacheDir(cache))
		j, err := r.NewJob(JobConfig{Dir: dir, Root: root, VarFiles: []string{"prod.tfvars"},
			SensitiveVars: map[string]string{"pw": "s3cret-pw"}})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, j.Close()) })
		require.Equal(t, launcher, j.execPath)
		tmp := filepath.Join(j.scratch, "tmp")
		require.Equal(t, tmp, j.env["HOME"])
		require.Equal(t, tmp, j.env["TMPDIR"])
		var p SandboxPolicy
		require.NoError(t, json.Unmarshal([]byte(j.env[SandboxEnv]), &p))
		require.Equal(t, r.bin, p.Exec)
		require.Equal(t, cache, p.PluginCache)
		require.Equal(t, append(append([]string{root, filepath.Join(j.scratch, "data"), tmp, filepath.Join(j.scratch, "plan")},
			SystemReadWrite...), "/var/lib/state"), p.ReadWrite)
		require.Subset(t, p.ReadOnly, append([]string{"/opt/extra", j.env["TF_CLI_CONFIG_FILE"], j.varFile,
			filepath.Join(dir, "prod.tfvars"), "/opt/ca/bundle.pem"}, SystemReadOnly...))
		require.NotContains(t, j.env[SandboxEnv], "s3cret-pw", "the policy names files, never their content")
		for _, forbidden := range []string{j.scratch, "/", "/etc", "/etc/ssl", "/dev", "/tmp", os.TempDir()} {
			require.NotContains(t, p.ReadWrite, forbidden)
			require.NotContains(t, p.ReadOnly, forbidden)
		}

		_, err = r.NewJob(JobConfig{Dir: dir, Env: map[string]string{"HOME": "/root"}})
		require.ErrorContains(t, err, "HOME (use WithSandbox: the job's scratch dir)")
	})
}

// A job with a port of its own (its broker's) is limited to it by default
// where the kernel has Landlock's port rules; a job without keeps the
// network as configured.
func TestSandboxLimitsAJobToItsOwnPorts(t *testing.T) {
	if err := SandboxConnectSupported(); err != nil {
		t.Fatalf("this kernel cannot limit ports, which this test checks: %v", err)
	}
	launcher := filepath.Join(t.TempDir(), "shardgate")
	require.NoError(t, os.WriteFile(launcher, nil, 0o755))
	dir := t.TempDir()
	policy := jobPolicy(t, testRunner(t, map[string]string{"PATH": "/usr/bin"}, WithSandbox(Sandbox{Launcher: launcher})))
	p := policy(JobConfig{Dir: dir, ConnectPorts: []int{40123}})
	require.True(t, p.LimitConnect)
	require.Equal(t, []int{40123}, p.ConnectPorts)
	require.False(t, policy(JobConfig{Dir: dir}).LimitConnect)
}

// A job's own writable directories (its project's local state) join the
// sandbox's shared ones, created when missing; another job does not get them.
func TestJobReadWriteIsTheJobsOwn(t *testing.T) {
	dir := t.TempDir()
	launcher := filepath.Join(t.TempDir(), "shardgate")
	require.NoError(t, os.WriteFile(launcher, nil, 0o755))
	policy := jobPolicy(t, testRunner(t, map[string]string{"PATH": "/usr/bin"}, WithSandbox(Sandbox{Launcher: launcher, ReadWrite: []string{"/var/lib/shared"}})))
	own := filepath.Join(t.TempDir(), "acme", "infra", "streams")
	p := policy(JobConfig{Dir: dir, ReadWrite: []string{own}})
	require.Equal(t, []string{"/var/lib/shared", own}, p.ReadWrite[len(p.ReadWrite)-2:])
	requireMode(t, own, 0o700)
	p = policy(JobConfig{Dir: dir})
	require.NotContains(t, p.ReadWrite, own)
	require.Equal(t, "/var/lib/shared", p.ReadWrite[len(p.ReadWrite)-1])
}

// jobPolicy returns the sandbox policy r's job for a config is given,
// closing the job at the test's end.
func jobPolicy(t *testing.T, r *Runner) func(JobConfig) SandboxPolicy {
	return func(cfg JobConfig) SandboxPolicy {
		j, err := r.NewJob(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, j.Close()) })
		var p SandboxPolicy
		require.NoError(t, json.Unmarshal([]byte(j.env[SandboxEnv]), &p))
		return p
	}
}
