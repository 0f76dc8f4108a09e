package bot

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// procStatusKiB reads one "Vm…" line of /proc/PID/status, in KiB.
func procStatusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			require.NoError(t, err)
			return kib
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// hostileProjects is a .shardgate.yaml of n projects on one directory,
// each in its own workspace; with vars > 0 the first lists vars var_files
// under an anchor every other one aliases (n*vars values for a few bytes
// each).
func hostileProjects(n, vars int) string {
	files, alias := "", ""
	if vars > 0 {
		files, alias = "\n    var_files: &v ["+strings.Repeat("v.tfvars, ", vars)+"last.tfvars]", ", var_files: *v"
	}
	lines := []string{"version: 1\nprojects:\n  - name: p0\n    dir: streams" + files}
	for i := 1; i < n; i++ {
		lines = append(lines, fmt.Sprintf("  - {name: p%d, dir: streams, workspace: w%d%s}", i, i, alias))
	}
	return strings.Join(lines, "\n") + "\n"
}

// A repository's .shardgate.yaml on its base branch cannot take `shardgate
// serve` down nor hold a worker for hours: an alias bomb, a NaN threshold and
// 3,000 projects on one directory each fail the pull request's configuration
// check, saying what to fix, nothing is planned, and serve's peak resident
// memory grows by less than 50 MiB over the three.
func TestHostileRepoConfigFailsThroughServeWithFlatMemory(t *testing.T) {
	tftest.Binary(t)
	h := newProcessHarnessBase(t)
	p := startServe(t, h)
	before := procStatusKiB(t, p.cmd.Process.Pid, "VmRSS")

	for i, tt := range []struct{ name, config, want string }{
		{"alias bomb", hostileProjects(3000, 2000), "alias *v expands the document past 50000 values"},
		{"nan threshold", "version: 1\nprojects:\n  - name: streams\n    dir: streams\npolicy:\n  max_scale_factor: .nan\n",
			`6:21: policy.max_scale_factor: want a finite number, got ".nan"`},
		{"3000 projects", hostileProjects(3000, 0), "this pull request selects 3000 projects, more than the 100"},
	} {
		h.repo.Checkout("main")
		h.repo.WriteFile(".shardgate.yaml", tt.config)
		h.repo.Commit(tt.name)
		branch := fmt.Sprintf("hostile-%d", i)
		h.repo.Branch(branch)
		h.writeRoot(with(baseGroups, map[string]int{"payments/ledger": 3 + i}))
		head := h.repo.Commit("scale payments on " + branch)
		pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: branch, User: author})
		p.deliver("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))
		body := h.eventuallyComment(pr, "blocked: the repository configuration is not valid")
		require.Contains(t, body, tt.want, tt.name)
		check := h.check(prreport.CheckConfigName, head)
		require.Equal(t, "failure", check.Conclusion, tt.name)
		require.Contains(t, check.Summary, tt.want, tt.name)
		for _, c := range h.gh.CheckRuns(owner, repoName) {
			require.False(t, c.HeadSHA == head && c.Name != prreport.CheckConfigName && strings.HasPrefix(c.Name, prreport.CheckPlanPrefix), "%s: %s was planned", tt.name, c.Name)
		}
	}
	peak := procStatusKiB(t, p.cmd.Process.Pid, "VmHWM")
	t.Logf("serve RSS before: %d KiB, peak after: %d KiB", before, peak)
	require.Less(t, peak-before, 50<<10, "serve's peak RSS grew from %d KiB to %d KiB", before, peak)
}
