package repoconfig

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// translate runs FromAtlantis on a testdata file and parses its output as a
// .shardgate.yaml: the translation must round-trip.
func translate(t *testing.T, name string) (*Config, string, []string) {
	t.Helper()
	data, err := os.ReadFile("testdata/atlantis/" + name)
	require.NoError(t, err)
	out, notes, err := FromAtlantis(name, data)
	require.NoError(t, err)
	cfg, err := Parse(FileName, out)
	require.NoError(t, err, "the translation of %s is not a valid .shardgate.yaml:\n%s", name, out)
	return cfg, string(out), notes
}

func TestFromAtlantisEveryKey(t *testing.T) {
	cfg, out, notes := translate(t, "every-key.yaml")
	require.Len(t, cfg.Projects, 3)
	network, _ := cfg.ProjectByName("network")
	require.Equal(t, "network", network.Dir)
	require.Equal(t, "= 1.5.7", network.TerraformVersion)
	require.Equal(t, []string{"*.tf", "../modules/**/*.tf", ".terraform.lock.hcl"}, network.WhenModified)
	require.Equal(t, []string{"-backend-config=backend.hcl", "-backend-config=key=network.tfstate"}, network.InitArgs)
	require.Equal(t, []string{"-var-file=prod.tfvars"}, network.PlanArgs, "-lock false is refused, the rest kept")
	require.Equal(t, []string{"main"}, network.Branches)
	require.Empty(t, network.DependsOn, "the first execution_order_group depends on nothing")

	infra, _ := cfg.ProjectByName("infra")
	require.Equal(t, "infra", infra.Dir)
	require.Equal(t, "prod", infra.Workspace)
	require.Equal(t, ">= 1.11.0", infra.TerraformVersion)
	require.Equal(t, []string{"network"}, infra.DependsOn, "depends_on and the group before, once")
	require.Equal(t, map[string]string{"TF_VAR_env": "prod"}, infra.Env, "a plain env step is carried over")

	app, _ := cfg.ProjectByName("stacks-app")
	require.Equal(t, "stacks/app", app.Dir)
	require.Equal(t, []string{"network"}, app.DependsOn, "execution_order_group 2 after group 1")
	require.Equal(t, []string{"*release*"}, app.Branches)

	// Every setting not carried over is named, in the file and in the notes.
	for _, key := range []string{"automerge", "autodiscover", "delete_source_branch_on_merge", "parallel_plan", "parallel_apply",
		"abort_on_execution_order_fail", "allowed_regexp_prefixes", "workflows.unused", "repo_locking", "repo_locks",
		"custom_policy_check", "plan_requirements", "apply_requirements", "import_requirements", "silence_pr_comments",
		"terraform_distribution", `"-lock=false"`, "autoplan.enabled", "env TOKEN", "run `terraform fmt -check`",
		"multienv `./envs.sh`", "run `echo hi`", "extra_args [-parallelism=1]", "stage policy_check", "stage import", "stage state_rm"} {
		require.Contains(t, out, "# not carried over: ", key)
		require.True(t, strings.Contains(out, key), "the output does not name %s:\n%s", key, out)
		require.True(t, containsPart(notes, key), "the notes do not name %s: %q", key, notes)
	}
}

func containsPart(list []string, part string) bool {
	for _, s := range list {
		if strings.Contains(s, part) {
			return true
		}
	}
	return false
}

func TestFromAtlantisUnknownKeysAreNamed(t *testing.T) {
	cfg, out, notes := translate(t, "monorepo.yaml")
	require.Equal(t, []string{"envs-dev", "envs-prod", "root-staging"}, names(cfg.Projects))
	require.Contains(t, out, "# not carried over: some_new_top_level_key: unknown Atlantis key")
	require.Contains(t, out, "# not carried over: future_key: unknown Atlantis key")
	require.Contains(t, notes, "envs-prod: future_key: unknown Atlantis key")
	dev, _ := cfg.ProjectByName("envs-dev")
	require.Equal(t, []string{"**/*.tf*", "../../modules/**/*"}, dev.WhenModified)
	require.Equal(t, []string{"-var-file=terraform.tfvars"}, dev.PlanArgs, "the default workflow serves projects that name none")
	root, _ := cfg.ProjectByName("root-staging")
	require.Equal(t, ".", root.Dir)
	require.Equal(t, "staging", root.Workspace)
}

func TestFromAtlantisTwoStatesInOneDir(t *testing.T) {
	cfg, _, notes := translate(t, "two-states-one-dir.yaml")
	require.Empty(t, notes)
	dev, _ := cfg.ProjectByName("app-dev")
	prod, _ := cfg.ProjectByName("app-prod")
	require.Equal(t, dev.Dir, prod.Dir)
	require.Equal(t, []string{"-backend-config=prod.backend.hcl"}, prod.InitArgs)
	require.Equal(t, []string{"-var-file=dev.tfvars"}, dev.PlanArgs)
}

func TestFromAtlantisRefusesWhatIsNotAtlantis(t *testing.T) {
	for name, text := range map[string]string{
		"not yaml":    "version: [3\n",
		"a list":      "- a\n",
		"no version":  "projects: []\n",
		"shardgate's": "version: 1\nprojects: []\n",
		"empty":       "",
	} {
		_, _, err := FromAtlantis("atlantis.yaml", []byte(text))
		var cerr *Error
		require.ErrorAs(t, err, &cerr, name)
		require.Contains(t, err.Error(), "atlantis.yaml", name)
	}
}

func TestBranchGlob(t *testing.T) {
	for re, want := range map[string]string{"/^main$/": "main", "/main/": "*main*", "/^release/.*/": "release/*", `/^release\.x$/`: "release.x"} {
		got, ok := branchGlob(re)
		require.True(t, ok, re)
		require.Equal(t, want, got, re)
	}
	_, ok := branchGlob("/^(main|dev)$/")
	require.False(t, ok)
}
