package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// appRoot is a root with a partial backend: its settings come at init
// (-backend-config), one file per environment; its resources take the
// environment from TF_VAR_env and their size from a var file.
const appRoot = `terraform {
  backend "local" {}
}
variable "env" {
  type = string
}
variable "size" {
  type = string
}
variable "token" {
  type      = string
  default   = ""
  sensitive = true
}
resource "terraform_data" "app" {
  input = "${var.env}-${var.size}"
}
resource "terraform_data" "token" {
  input = nonsensitive(sha256(var.token))
}
`

// stateInputs are the inputs of the terraform_data resources in a state
// file beside the streams' state, by resource name.
func stateInputs(h *harness, file string) map[string]string {
	h.t.Helper()
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(h.state), file))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(h.t, err)
	var st struct {
		Resources []struct {
			Name      string
			Instances []struct {
				Attributes struct {
					Input struct{ Value string } `json:"input"`
				} `json:"attributes"`
			}
		}
	}
	require.NoError(h.t, json.Unmarshal(raw, &st))
	out := map[string]string{}
	for _, r := range st.Resources {
		out[r.Name] = r.Instances[0].Attributes.Input.Value
	}
	return out
}

// One directory planned as two projects, dev and prod, each with its backend
// file and var file outside the dir, its env, and prod's backend setting from
// the server's environment: two check runs, two states; a change of prod's
// var file plans prod alone, as an update of its existing state.
func TestOneDirectoryTwoEnvironments(t *testing.T) {
	h := newHarnessBase(t)
	stateDir := filepath.Dir(h.state)
	// A backend setting from the server's environment (the local backend's
	// workspace_dir stands in for a password): never shown, never written.
	t.Setenv("H34_TEST_PROD_WORKSPACE_DIR", filepath.Join(stateDir, "prod-workspaces"))
	const token = "prod-token-5f3c9a1e"
	t.Setenv("H34_TEST_PROD_TOKEN", token)
	h.repo.Checkout("main")
	h.repo.WriteFile("app/main.tf", appRoot)
	for env, size := range map[string]string{"dev": "small", "prod": "large"} {
		h.repo.WriteFile("env/"+env+".backend.hcl", `path = "`+filepath.Join(stateDir, "app-"+env+".tfstate")+`"`+"\n")
		h.repo.WriteFile("env/"+env+".tfvars", `size = "`+size+`"`+"\n")
	}
	h.repo.WriteFile(".shardgate.yaml", `version: 1
projects:
  - name: streams
    dir: streams
  - name: app-dev
    dir: app
    init_args: [-backend-config=../env/dev.backend.hcl]
    var_files: [../env/dev.tfvars]
    env: {TF_VAR_env: dev}
  - name: app-prod
    dir: app
    init_args: [-backend-config=../env/prod.backend.hcl]
    plan_args: [-refresh=true]
    var_files: [../env/prod.tfvars]
    env: {TF_VAR_env: prod}
    backend_config_env: {workspace_dir: H34_TEST_PROD_WORKSPACE_DIR}
    secret_env: {TF_VAR_token: H34_TEST_PROD_TOKEN}
`)
	h.repo.Commit("one app, two environments")
	h.start()

	pr := h.openPRWith("app-extra", baseGroups, map[string]string{"app/extra.tf": dataResource("extra", "extra")})
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	for _, p := range []string{"app-dev", "app-prod"} {
		check := h.check(prreport.CheckPlanPrefix+p, head)
		require.Equal(t, "success", check.Conclusion, "%s: %s", p, check.Summary)
	}
	body := h.theComment(pr)
	require.Contains(t, body, "planned 2 projects")
	require.Contains(t, body, "-backend-config=../env/prod.backend.hcl", "the comment's details show the init arguments")
	require.NotContains(t, body, "prod-workspaces", "a backend setting from the server's environment is never shown")
	require.NotContains(t, body, token, "nor a secret_env value")

	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 2)
	for _, j := range jobs {
		require.Equal(t, applyqueue.Applied, j.State, j.Reason)
	}
	require.NotEqual(t, jobs[0].StateKey, jobs[1].StateKey, "two states, applied each under its own lock")
	tokenHash := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	require.Equal(t, map[string]string{"app": "dev-small", "extra": "extra", "token": tokenHash("")}, stateInputs(h, "app-dev.tfstate"))
	require.Equal(t, map[string]string{"app": "prod-large", "extra": "extra", "token": tokenHash(token)}, stateInputs(h, "app-prod.tfstate"),
		"prod's secret_env reached terraform")

	// prod's var file only: prod alone, an update of the state it has.
	pr2 := h.openPRWith("prod-bigger", baseGroups, map[string]string{"env/prod.tfvars": `size = "huge"` + "\n"})
	head2 := h.gh.PR(owner, repoName, pr2.Number).HeadSHA
	plans, err := h.srv.rec.Plans(context.Background(), prRefOf(pr2), head2)
	require.NoError(t, err)
	require.Len(t, plans, 1)
	require.Equal(t, "app-prod", plans[0].Project)
	require.Empty(t, plans[0].Error)
	var changed []string
	for _, c := range plans[0].ChangeSet.OtherChanges {
		changed = append(changed, c.Address+" "+strings.Join(c.Actions, ","))
	}
	require.Equal(t, []string{"terraform_data.app update"}, changed, "an update of what prod's state holds (without it: two creates)")
}

// A project's env may not override shardgate's own variables: the proxy
// that routes terraform through the coordinator broker among them. The base
// branch's file is a configuration error, shown on the pull request; nothing
// is planned.
func TestProjectEnvCannotOverrideTheBrokerProxy(t *testing.T) {
	h := newHarnessBase(t)
	h.repo.Checkout("main")
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\n    env: {HTTPS_PROXY: \"http://elsewhere:3128\", TF_VAR_env: prod}\n")
	h.repo.Commit("a project env with a proxy")
	h.start()
	pr := h.openPR("scale", with(baseGroups, map[string]int{"payments/ledger": 3}))
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	check := h.check(prreport.CheckConfigName, head)
	require.Equal(t, "failure", check.Conclusion)
	require.Contains(t, check.Summary, "HTTPS_PROXY is set by shardgate")
	require.Contains(t, h.theComment(pr), "not valid")
}

// pinnedRoot is a root that requires a terraform version, with a local state
// of its own beside the streams'.
func pinnedRoot(h *harness, project, requires string) string {
	return `terraform {
  required_version = "` + requires + `"
  backend "local" {
    path = "` + otherState(h, project) + `"
  }
}
` + dataResource(project, project)
}

// Two terraform binaries in one server: projects pinned to different
// versions (required_version, or terraform_version in .shardgate.yaml) plan
// and apply each with the newest binary that satisfies them, the same for
// plan and apply; a project no binary satisfies fails its check naming the
// constraint and the versions there are.
func TestProjectsPinnedToDifferentTerraformVersions(t *testing.T) {
	newer := tftest.TerraformNew(t)
	h := newHarnessBase(t)
	h.cfg.TerraformBinaries = []string{newer}
	h.repo.Checkout("main")
	h.repo.WriteFile(".shardgate.yaml", `version: 1
projects:
  - name: streams
    dir: streams
  - name: old
    dir: old
  - name: new
    dir: new
    terraform_version: ">= 1.11.0"
  - name: ancient
    dir: ancient
`)
	h.repo.Commit("three pinned projects")
	h.start()

	pr := h.openPRWith("pinned", baseGroups, map[string]string{
		"old/main.tf":     pinnedRoot(h, "old", "~> 1.5.0"),
		"new/main.tf":     pinnedRoot(h, "new", ">= 1.6.0"),
		"ancient/main.tf": pinnedRoot(h, "ancient", "~> 0.12.0"),
	})
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	require.Equal(t, "success", h.check(prreport.CheckPlanPrefix+"old", head).Conclusion)
	require.Equal(t, "success", h.check(prreport.CheckPlanPrefix+"new", head).Conclusion)
	ancient := h.check(prreport.CheckPlanPrefix+"ancient", head)
	require.Equal(t, "failure", ancient.Conclusion)
	require.Contains(t, ancient.Summary, `no terraform of this shardgate server satisfies required_version in ancient "~> 0.12.0"`)
	require.Contains(t, ancient.Summary, "terraform 1.5.7")
	require.Contains(t, ancient.Summary, "terraform 1.11.4")
	body := h.theComment(pr)
	require.Contains(t, body, "How `old` was planned</summary>\n\n- with: `terraform 1.5.7`")
	require.Contains(t, body, "How `new` was planned</summary>\n\n- with: `terraform 1.11.4`")

	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	applied := map[string]applyqueue.State{}
	for _, j := range jobs {
		applied[j.Project] = j.State
		require.Equal(t, applyqueue.Applied, j.State, "%s: %s", j.Project, j.Reason)
	}
	require.Len(t, applied, 2, "old and new; ancient was not planned")
	require.Equal(t, []string{"terraform_data.old"}, stateResources(h, "old"))
	require.Equal(t, []string{"terraform_data.new"}, stateResources(h, "new"))
	require.Equal(t, "1.5.7", stateVersion(h, "old"))
	require.Equal(t, "1.11.4", stateVersion(h, "new"), "applied with the binary that planned it")
}

// stateVersion is the terraform version that last wrote a project's state.
func stateVersion(h *harness, project string) string {
	h.t.Helper()
	raw, err := os.ReadFile(otherState(h, project))
	require.NoError(h.t, err)
	var st struct {
		Version string `json:"terraform_version"`
	}
	require.NoError(h.t, json.Unmarshal(raw, &st))
	return st.Version
}

// A change in a local module plans exactly the projects that call it
// (directly or through another module); a file outside a project that its
// when_modified names plans it; a change no project reads plans nothing.
func TestSelectionByWhatProjectsRead(t *testing.T) {
	h := newHarnessBase(t)
	h.repo.Checkout("main")
	h.repo.WriteFile("modules/tag/main.tf", "variable \"name\" {\n  type = string\n}\n"+dataResource("tag", "v1"))
	h.repo.WriteFile("modules/wrap/main.tf", "module \"tag\" {\n  source = \"../tag\"\n  name   = \"wrapped\"\n}\n")
	for _, p := range []string{"alarms", "queues", "lonely"} {
		h.repo.WriteFile(p+"/main.tf", otherRoot(h, p))
	}
	h.repo.WriteFile("alarms/tag.tf", "module \"tag\" {\n  source = \"../modules/tag\"\n  name   = \"alarms\"\n}\n")
	h.repo.WriteFile("queues/wrap.tf", "module \"wrap\" {\n  source = \"../modules/wrap\"\n}\n")
	h.repo.WriteFile(".shardgate.yaml", `version: 1
projects:
  - name: streams
    dir: streams
  - name: alarms
    dir: alarms
  - name: queues
    dir: queues
  - name: lonely
    dir: lonely
    when_modified: ["*.tf", "../shared/*.txt"]
`)
	h.repo.Commit("projects and modules")
	h.start()

	planned := func(pr githubtest.PullRequest) []string {
		head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
		plans, err := h.srv.rec.Plans(context.Background(), prRefOf(pr), head)
		require.NoError(t, err)
		var out []string
		for _, p := range plans {
			require.Empty(t, p.Error, p.Project)
			out = append(out, p.Project)
		}
		slices.Sort(out)
		return out
	}
	module := h.openPRWith("module-fix", baseGroups, map[string]string{"modules/tag/main.tf": "variable \"name\" {\n  type = string\n}\n" + dataResource("tag", "v2")})
	require.Equal(t, []string{"alarms", "queues"}, planned(module), "the module's callers, queues through modules/wrap; not streams, not lonely")

	shared := h.openPRWith("shared-file", baseGroups, map[string]string{"shared/limits.txt": "10\n"})
	require.Equal(t, []string{"lonely"}, planned(shared))

	nobody := h.openPRWith("unread", baseGroups, map[string]string{"modules/unused/main.tf": dataResource("unused", "x")})
	require.Empty(t, planned(nobody))
	require.Contains(t, h.theComment(nobody), "no project reads the files this pull request changes")
}

// A merge changing network and infra, infra `depends_on: [network]`: network
// is applied first, and infra only after it: infra's merge-commit plan reads
// network's state (terraform_remote_state) and records what it saw.
func TestDependsOnAppliesTheDependencyFirst(t *testing.T) {
	h := newHarnessBase(t)
	h.repo.Checkout("main")
	h.repo.WriteFile("network/main.tf", otherRoot(h, "network"))
	h.repo.WriteFile("infra/main.tf", otherRoot(h, "infra")+`data "terraform_remote_state" "network" {
  backend = "local"
  config = {
    path = "`+otherState(h, "network")+`"
  }
}
output "network_seen" {
  value = try(data.terraform_remote_state.network.outputs.vpc, "none")
}
`)
	// infra is listed first: the order comes from depends_on alone.
	h.repo.WriteFile(".shardgate.yaml", `version: 1
projects:
  - name: streams
    dir: streams
  - name: infra
    dir: infra
    depends_on: [network]
  - name: network
    dir: network
`)
	h.repo.Commit("network and infra")
	// network's state exists, without outputs yet.
	require.NoError(t, os.WriteFile(otherState(h, "network"),
		[]byte(`{"version": 4, "terraform_version": "1.5.7", "serial": 1, "lineage": "network", "outputs": {}, "resources": []}`), 0o600))
	h.start()

	pr := h.openPRWith("vpc-and-app", baseGroups, map[string]string{
		"network/vpc.tf": dataResource("vpc", "10.0.0.0/16") + "output \"vpc\" {\n  value = terraform_data.vpc.output\n}\n",
		"infra/app.tf":   dataResource("app", "app"),
	})
	require.Contains(t, h.theComment(pr), "✅ **Allowed")
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 2, h.theComment(pr))
	require.Equal(t, "network", jobs[0].Project, "queued first")
	require.Equal(t, []string{"network"}, jobs[1].After)
	for _, j := range jobs {
		require.Equal(t, applyqueue.Applied, j.State, "%s: %s", j.Project, j.Reason)
	}
	raw, err := os.ReadFile(otherState(h, "infra"))
	require.NoError(t, err)
	var st struct {
		Outputs map[string]struct{ Value string } `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(raw, &st))
	require.Equal(t, "10.0.0.0/16", st.Outputs["network_seen"].Value, "infra ran after network was applied")
	body := h.eventuallyComment(pr, "merged and applied (2 projects).")
	require.Less(t, strings.Index(body, "| `network` |"), strings.Index(body, "| `infra` |"), "the comment shows the order")
}
