package repoconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseProjectKeys(t *testing.T) {
	cfg, err := Parse(".shardgate.yaml", []byte(`
version: 1
projects:
  - name: network
    dir: network
    terraform_version: "~> 1.5.0"
  - name: app-dev
    dir: stacks/app
    var_files: [../../env/dev.tfvars]
    init_args: [-backend-config=../../env/dev.backend.hcl]
    depends_on: [network]
  - name: app-prod
    dir: stacks/app
    var_files: [../../env/prod.tfvars]
    init_args: ["-backend-config=../../env/prod.backend.hcl", "-backend-config=key=prod.tfstate"]
    plan_args: [-refresh=true, -lock=true]
    backend_config_env: {password: PROD_BACKEND_PASSWORD}
    env: {TF_VAR_env: prod, AWS_REGION: eu-west-1}
    secret_env: {DB_TOKEN: SHARDGATE_PROD_DB_TOKEN}
    branches: [main, "release/*"]
    when_modified: ["*.tf", "../../modules/**/*.tf"]
    depends_on: [network, app-dev]
`))
	require.NoError(t, err)
	prod, ok := cfg.ProjectByName("app-prod")
	require.True(t, ok)
	require.Equal(t, ProjectKeys{
		WhenModified:     []string{"*.tf", "../../modules/**/*.tf"},
		DependsOn:        []string{"network", "app-dev"},
		InitArgs:         []string{"-backend-config=../../env/prod.backend.hcl", "-backend-config=key=prod.tfstate"},
		PlanArgs:         []string{"-refresh=true", "-lock=true"},
		BackendConfigEnv: map[string]string{"password": "PROD_BACKEND_PASSWORD"},
		Env:              map[string]string{"TF_VAR_env": "prod", "AWS_REGION": "eu-west-1"},
		SecretEnv:        map[string]string{"DB_TOKEN": "SHARDGATE_PROD_DB_TOKEN"},
		Branches:         []string{"main", "release/*"},
	}, prod.ProjectKeys)
	require.Equal(t, []string{"../../env/prod.tfvars"}, prod.VarFiles)
	net, _ := cfg.ProjectByName("network")
	require.Equal(t, "~> 1.5.0", net.TerraformVersion)
}

func TestParseProjectKeysProblems(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"arguments shardgate refuses", `
  - name: a
    dir: a
    init_args: [-chdir=x, -backend=false, "-backend-config=../../../out.hcl", backend.hcl]
    plan_args: [-lock=false, -state=x.tfstate, -state-out=y, -out=p, -lock]`, []string{
			`projects[0].init_args[0] "-chdir=x" is refused`,
			`projects[0].init_args[1] "-backend=false" is refused`,
			`projects[0].init_args[2] "../../../out.hcl" leaves the repository`,
			`projects[0].init_args[3] "backend.hcl" is not a flag`,
			`projects[0].plan_args[0] "-lock=false": shardgate always holds the state lock`,
			`projects[0].plan_args[1] "-state=x.tfstate" is refused`,
			`projects[0].plan_args[2] "-state-out=y" is refused`,
			`projects[0].plan_args[3] "-out=p" is refused`,
			`projects[0].plan_args[4] "-lock": shardgate always holds the state lock`,
		}},
		{"environment that would override shardgate's", `
  - name: a
    dir: a
    env: {HTTPS_PROXY: "http://evil:3128", https_proxy: x, TF_CLI_CONFIG_FILE: /tmp/rc, TF_VAR_coordinator_password: x, TF_LOG: TRACE, OK_NAME: fine}
    secret_env: {HOME: X, "bad name": Y, GOOD: "not a name"}`, []string{
			"projects[0].env: HTTPS_PROXY is set by shardgate",
			"projects[0].env: https_proxy is set by shardgate",
			"projects[0].env: TF_CLI_CONFIG_FILE is one of terraform's own TF_ variables",
			"projects[0].env: TF_LOG is one of terraform's own TF_ variables",
			"projects[0].env: TF_VAR_coordinator_password is set by shardgate",
			"projects[0].secret_env: HOME is set by shardgate",
			"projects[0].secret_env: bad name is not a variable name",
			`projects[0].secret_env.GOOD: "not a name" is not the name of a variable`,
		}},
		{"paths out of the repository", `
  - name: a
    dir: a
    var_files: [../b/ok.tfvars, ../../out.tfvars]
    when_modified: ["../../**/*.tf", "!../../x"]`, []string{
			`projects[0].var_files[1] "../../out.tfvars" leaves the repository`,
			`projects[0].when_modified[0] "../../**/*.tf" leaves the repository`,
			`projects[0].when_modified[1] "../../x" leaves the repository`,
		}},
		{"dependencies", `
  - {name: a, dir: a, depends_on: [b]}
  - {name: b, dir: b, depends_on: [c]}
  - {name: c, dir: c, depends_on: [a, nobody, c]}`, []string{
			`projects[2].depends_on[1]: no project is named "nobody"`,
			"projects[2].depends_on[2]: a project cannot depend on itself",
			"projects: depends_on forms a cycle: a → b → c → a",
		}},
		{"one state twice", `
  - {name: a, dir: app, var_files: [dev.tfvars]}
  - {name: b, dir: app/, var_files: [dev.tfvars]}`, []string{
			`projects[1]: dir "app/" and workspace "default" are already a project`,
		}},
		{"version and branches", `
  - {name: a, dir: a, terraform_version: "about one", branches: ["[main"]}`, []string{
			`projects[0].terraform_version "about one" is not a version constraint`,
			`projects[0].branches[0] "[main" is not a branch glob`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(".shardgate.yaml", []byte("version: 1\nprojects:"+tc.yaml+"\n"))
			var cerr *Error
			require.ErrorAs(t, err, &cerr)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.Len(t, cerr.Problems, len(tc.want), err.Error())
		})
	}
}

func TestParseSharedDirWithOwnBackends(t *testing.T) {
	cfg, err := Parse("x", []byte(`
version: 1
projects:
  - {name: dev, dir: app, init_args: [-backend-config=dev.hcl], var_files: [dev.tfvars]}
  - {name: prod, dir: app, init_args: [-backend-config=prod.hcl], var_files: [prod.tfvars]}
`))
	require.NoError(t, err)
	require.Len(t, cfg.Projects, 2)
}

func TestDependenciesAndApplyOrder(t *testing.T) {
	cfg, err := Parse("x", []byte(`
version: 1
projects:
  - {name: app, dir: app, depends_on: [infra]}
  - {name: infra, dir: infra, depends_on: [network, iam]}
  - {name: network, dir: network, depends_on: [iam]}
  - {name: iam, dir: iam}
  - {name: other, dir: other}
`))
	require.NoError(t, err)
	require.Equal(t, []string{"infra", "network", "iam"}, cfg.DependenciesOf("app"))
	require.Empty(t, cfg.DependenciesOf("iam"))
	require.Equal(t, []string{"other", "iam", "app"}, cfg.ApplyOrder([]string{"other", "app", "iam"}), "app after iam, through infra and network it does not apply")
	require.Equal(t, []string{"iam", "network", "infra", "app"}, cfg.ApplyOrder([]string{"app", "infra", "network", "iam"}))
}
