package bot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
)

// With terraform.sandbox_writable per project ({owner}/{repo}/{project}), a
// plan writes and locks its own project's local state only: a pull request
// that points the project's local backend at another project's state file
// cannot open it for writing (nor lock it), and that file is left as it was.
func TestPlanCannotWriteAnotherProjectsState(t *testing.T) {
	h := newHarnessBase(t)
	root := t.TempDir()
	h.cfg.SandboxWritable = []string{filepath.Join(root, "{owner}", "{repo}", "{project}")}
	mine := filepath.Join(root, owner, repoName, "streams")
	other := filepath.Join(root, owner, repoName, "payments")
	applied, err := os.ReadFile(h.state)
	require.NoError(t, err)
	for _, dir := range []string{mine, other} {
		require.NoError(t, os.MkdirAll(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "terraform.tfstate"), applied, 0o600))
	}
	// The default branch keeps its state where the project's own directory is.
	h.state = filepath.Join(mine, "terraform.tfstate")
	h.repo.Checkout("main")
	h.writeRoot(baseGroups)
	h.repo.Commit("state in the project's own directory")
	h.start()

	pr := h.openPR("own-state", with(baseGroups, map[string]int{"payments/ledger": 3}))
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	body := h.theComment(pr)
	require.NotContains(t, body, "permission denied")
	require.Equal(t, "failure", h.check(prreport.CheckPlanPrefix+"streams", head).Conclusion, "planned and judged (denied: no attestation)")
	require.Contains(t, body, "(`quiesce_attestation`)", "the plan ran with its own state")

	h.state = filepath.Join(other, "terraform.tfstate")
	pr = h.openPR("other-state", with(baseGroups, map[string]int{"payments/ledger": 3}))
	body = h.theComment(pr)
	require.Contains(t, body, "permission denied")
	require.NotContains(t, body, "(`quiesce_attestation`)", "no plan from another project's state")
	got, err := os.ReadFile(filepath.Join(other, "terraform.tfstate"))
	require.NoError(t, err)
	require.Equal(t, applied, got, "the other project's state is untouched")
	entries, err := os.ReadDir(other)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no lock file, no backup beside the other project's state")
}
