package planrun

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/terraform/runner"
)

func bin(path, v string, tofu bool) Binary {
	return Binary{Identity: runner.Identity{Path: path, Version: v, OpenTofu: tofu}}
}

func TestBinariesChooseTheNewestThatSatisfies(t *testing.T) {
	root := t.TempDir()
	for dir, requires := range map[string]string{"old": "~> 1.5.0", "new": ">= 1.6.0", "both": ">= 1.5.0", "none": "~> 0.12.0"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, dir, "versions.tf"),
			[]byte("terraform {\n  required_version = \""+requires+"\"\n}\n"), 0o644))
	}
	// Two required_version constraints in two files both count.
	require.NoError(t, os.WriteFile(filepath.Join(root, "both", "more.tf"), []byte("terraform {\n  required_version = \"< 1.12.0\"\n}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "both", "versions.tf"), []byte("terraform {\n  required_version = \">= 1.5.0\"\n}\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "free"), 0o755))

	def := bin("/bin/terraform", "1.5.7", false)
	bs := NewBinaries(def, bin("/bin/tofu", "1.12.6", true), bin("/bin/terraform-1.11.4", "1.11.4", false), def)
	require.True(t, bs.Several())
	choose := func(p repoconfig.Project) string {
		b, err := bs.For(root, p)
		require.NoError(t, err, p.Name)
		return b.Path
	}
	require.Equal(t, "/bin/terraform", choose(repoconfig.Project{Name: "old", Dir: "old"}))
	require.Equal(t, "/bin/tofu", choose(repoconfig.Project{Name: "new", Dir: "new"}), "the newest that satisfies")
	require.Equal(t, "/bin/terraform-1.11.4", choose(repoconfig.Project{Name: "both", Dir: "both"}), "every constraint counts")
	require.Equal(t, "/bin/terraform", choose(repoconfig.Project{Name: "free", Dir: "free"}), "no constraint: the default")
	pinned := repoconfig.Project{Name: "pinned", Dir: "new"}
	pinned.TerraformVersion = "~> 1.11.0"
	require.Equal(t, "/bin/terraform-1.11.4", choose(pinned), "terraform_version wins over required_version")

	_, err := bs.For(root, repoconfig.Project{Name: "none", Dir: "none"})
	require.EqualError(t, err, `project "none": no terraform of this shardgate server satisfies required_version in none "~> 0.12.0"; `+
		`it has OpenTofu 1.12.6, terraform 1.11.4, terraform 1.5.7 (terraform.binary and terraform.binaries)`)

	b, ok := bs.ByPath("/bin/terraform-1.11.4")
	require.True(t, ok)
	require.Equal(t, "terraform 1.11.4", b.Name())
	_, ok = bs.ByPath("/bin/gone")
	require.False(t, ok)
	require.False(t, NewBinaries(def).Several())
}

func TestProjectJobRevealsServerSecretsAndKeepsShardgatesEnv(t *testing.T) {
	server := map[string]string{"PROD_DB_TOKEN": "s3cr3t-token", "PROD_BACKEND_PW": "backend-pw"}
	lookup := func(k string) (string, bool) { v, ok := server[k]; return v, ok }
	var k repoconfig.ProjectKeys
	k.InitArgs = []string{"-backend-config=prod.hcl"}
	k.PlanArgs = []string{"-refresh=false"}
	k.Env = map[string]string{"TF_VAR_env": "prod", "AWS_REGION": "eu-west-1"}
	k.SecretEnv = map[string]string{"TF_VAR_token": "PROD_DB_TOKEN"}
	k.BackendConfigEnv = map[string]string{"password": "PROD_BACKEND_PW"}
	cfg := runner.JobConfig{Dir: "/checkout/app", SecretEnv: map[string]string{"PLAN_ROLE": "role"}}
	require.NoError(t, ProjectJob(&cfg, []string{"../env/prod.tfvars"}, k, map[string]string{"HTTPS_PROXY": "http://127.0.0.1:1"}, lookup))
	require.Equal(t, []string{"/checkout/env/prod.tfvars"}, cfg.VarFiles)
	require.Equal(t, k.InitArgs, cfg.InitArgs)
	require.Equal(t, k.PlanArgs, cfg.PlanArgs)
	require.Equal(t, map[string]string{"TF_VAR_env": "prod", "AWS_REGION": "eu-west-1", "HTTPS_PROXY": "http://127.0.0.1:1"}, cfg.Env)
	require.Equal(t, map[string]string{"PLAN_ROLE": "role", "TF_VAR_token": "s3cr3t-token"}, cfg.SecretEnv)
	require.Equal(t, map[string]string{"password": "backend-pw"}, cfg.SecretBackendConfig)

	delete(server, "PROD_DB_TOKEN")
	cfg = runner.JobConfig{Dir: "/checkout/app"}
	err := ProjectJob(&cfg, nil, k, nil, lookup)
	require.EqualError(t, err, "the project's secret_env or backend_config_env names PROD_DB_TOKEN, not set in the shardgate server's environment")
}
