package bot

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// The monorepo of issue 37: n small projects (projects/pNN) that all call
// one local module (modules/shared), beside the harness's coordinator
// project (streams). A pull request that changes the shared module selects
// every small project and no other.

// monorepoProject names the i-th small project.
func monorepoProject(i int) string { return fmt.Sprintf("p%02d", i) }

// sharedModule is modules/shared at a revision: one built-in resource per
// caller, no provider to install, so terraform's own work is the floor.
func sharedModule(revision int) string {
	return fmt.Sprintf(`variable "name" {
  type = string
}

resource "terraform_data" "service" {
  input = {
    name     = var.name
    revision = %d
  }
}

output "revision" {
  value = terraform_data.service.output
}
`, revision)
}

// writeMonorepo adds the n projects and the shared module to the harness's
// repository on main, each project's local state beside the harness's (a
// remote backend's stand-in, writable in the sandbox), and lists them all in
// .shardgate.yaml. It returns the project names.
func writeMonorepo(h *harness, n int) []string {
	h.t.Helper()
	h.repo.Checkout("main")
	var cfg strings.Builder
	cfg.WriteString("version: 1\nprojects:\n  - name: streams\n    dir: streams\n")
	names := make([]string, n)
	for i := range n {
		name := monorepoProject(i)
		names[i] = name
		h.repo.WriteFile("projects/"+name+"/main.tf", fmt.Sprintf(`terraform {
  backend "local" {
    path = %q
  }
}

module "shared" {
  source = "../../modules/shared"
  name   = %q
}
`, filepath.Join(filepath.Dir(h.state), name+".tfstate"), name))
		fmt.Fprintf(&cfg, "  - name: %s\n    dir: projects/%s\n", name, name)
	}
	h.repo.WriteFile("modules/shared/main.tf", sharedModule(1))
	h.repo.WriteFile(".shardgate.yaml", cfg.String())
	h.repo.Commit(fmt.Sprintf("%d projects on one shared module", n))
	return names
}

// openSharedModulePR changes the shared module on a branch and opens its
// pull request (not delivered).
func openSharedModulePR(h *harness, branch string) githubtest.PullRequest {
	h.t.Helper()
	h.repo.Checkout("main")
	h.repo.Branch(branch)
	h.repo.WriteFile("modules/shared/main.tf", sharedModule(2))
	h.repo.Commit("shared module: revision 2")
	return h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: branch, User: author})
}

// rawMonorepoPlans runs `terraform init && plan -out && show -json` of each
// project of rev's tree (a branch or a commit) as processes, workers at a time, as a CI job
// would without shardgate, and returns the wall time of all of them.
func rawMonorepoPlans(t testing.TB, h *harness, tf, rev string, names []string, workers int) time.Duration {
	t.Helper()
	dir := exportTree(t, h, rev)
	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=")
	next := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range next {
				for _, args := range [][]string{{"init", "-input=false"}, {"plan", "-input=false", "-out=tfplan"}, {"show", "-json", "tfplan"}} {
					cmd := exec.Command(tf, args...)
					cmd.Dir, cmd.Env = filepath.Join(dir, "projects", name), env
					if out, err := cmd.CombinedOutput(); err != nil {
						mu.Lock()
						failed = append(failed, fmt.Sprintf("%s: terraform %s: %v: %s", name, args[0], err, out))
						mu.Unlock()
						break
					}
				}
			}
		}()
	}
	for _, name := range names {
		next <- name
	}
	close(next)
	wg.Wait()
	took := time.Since(start)
	require.Empty(t, failed)
	return took
}

// exportTree writes the tree of rev into a fresh directory, as a CI
// job's checkout would be, and returns it.
func exportTree(t testing.TB, h *harness, rev string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("git", "-C", h.repo.Dir(), "archive", "--format=tar", "-o", filepath.Join(dir, "head.tar"), rev).CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command("tar", "-xf", filepath.Join(dir, "head.tar"), "-C", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	return dir
}
