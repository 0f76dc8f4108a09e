package bot

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// A merge group that plans more projects than report.max_project_checks
// gives none of them a check run on its head: their results are rows of the
// group's aggregate `shardgate` check run (one not planned is an annotation
// too), each project is planned once, and the group's check-run writes do
// not grow with its projects.
func TestMergeGroupFoldsManyProjectsIntoTheAggregateCheck(t *testing.T) {
	h := newHarnessBase(t)
	names, pr := foldingMonorepo(h)
	g, body := h.groupCheckRequested(nil, pr)
	before := len(h.gh.Requests())
	h.run("merge_group", body)

	requireFolded(t, h, g.HeadSHA, names)
	creates, edits := checkRunWrites(h.gh.Requests()[before:])
	require.Equal(t, 1, creates, "the aggregate check run only")
	require.Equal(t, 1, edits, "the aggregate check run, completed once")
}

// plannedGroupOfThree runs the merge group of a change to the shared
// module of three projects, under report.max_project_checks (3), and checks
// that the group and each project, with a check run of its own on the
// group's head, were judged allowed. It returns the projects and the
// GitHub requests of the group's job.
func plannedGroupOfThree(t *testing.T) ([]string, []githubtest.Recorded) {
	t.Helper()
	h := newHarnessBase(t)
	h.cfg.MaxProjectChecks = 3
	names := writeMonorepo(h, 3)
	h.start()
	pr := openSharedModulePR(h, "shared-v2")
	g, body := h.groupCheckRequested(nil, pr)
	before := len(h.gh.Requests())
	h.run("merge_group", body)

	require.Equal(t, "success", h.check(prreport.CheckGateName, g.HeadSHA).Conclusion)
	for _, n := range names {
		plan := h.check(prreport.CheckPlanPrefix+n, g.HeadSHA)
		require.Equal(t, "completed", plan.Status)
		require.Equal(t, "success", plan.Conclusion, plan.Summary)
	}
	return names, h.gh.Requests()[before:]
}

// Under report.max_project_checks a merge group's projects keep a check run
// each on its head, each created once and completed once (after the group's
// projects are judged together, never before).
func TestMergeGroupUnderTheLimitWritesEachCheckRunTwice(t *testing.T) {
	names, reqs := plannedGroupOfThree(t)
	creates, edits := checkRunWrites(reqs)
	require.Equal(t, 1+len(names), creates, "the aggregate check run and one per project")
	require.Equal(t, 1+len(names), edits, "each completed once")
}

// A merge group's head is fetched once: the checkout that follows the
// module graph to select its projects (all three, through the shared
// module) is the one they are planned in, as a pull request's is.
func TestMergeGroupFetchesItsHeadOnce(t *testing.T) {
	_, reqs := plannedGroupOfThree(t)
	tarballs := 0
	for _, q := range reqs {
		if q.Method == http.MethodGet && strings.Contains(q.Path, "/tarball/") {
			tarballs++
		}
	}
	require.Equal(t, 1, tarballs, "tarball downloads of the group's head")
}
