package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prcommand"
	"github.com/shardgate/shardgate/internal/streamroot"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
)

// addRepo adds a second repository of installation 1 holding the example
// module and a root without groups, with a state of its own.
func (h *harness) addRepo(name string) *githubtest.GitRepo {
	h.t.Helper()
	repo := githubtest.NewGitRepo(h.t)
	module, err := filepath.Glob(filepath.Join("..", "examples", "modules", "stream-group", "*"))
	require.NoError(h.t, err)
	for _, f := range module {
		b, err := os.ReadFile(f)
		require.NoError(h.t, err)
		repo.WriteFile("modules/stream-group/"+filepath.Base(f), string(b))
	}
	repo.WriteFile("streams/main.tf", streamroot.MainTF(h.repoState(name), h.simURL, map[string]int{}))
	repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\n")
	repo.Commit("initial streams")
	h.gh.AddRepo(owner, name, repo)
	for _, u := range []string{author, approver, teamMate} {
		h.gh.SetPermission(owner, name, u, "write")
	}
	return repo
}

// repoState is the local state of another repository, beside h.state (where
// the sandbox may write).
func (h *harness) repoState(name string) string {
	return filepath.Join(filepath.Dir(h.state), name+".tfstate")
}

// A storm of identical help comments on one pull request gets one reply that
// names the duplicates, and while the storm's run is slow (GitHub holds its
// first call), a pull request of another repository of the same installation
// is planned on the other worker: the storm takes one worker, not both.
func TestAHelpStormGetsOneReplyAndStarvesNoOtherRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("terraform")
	}
	h := newHarnessBase(t)
	var paused atomic.Bool
	h.tune = func(s *Server) {
		health := s.dispatcher.Paused
		s.dispatcher.Paused = func() bool { return paused.Load() || health() }
	}
	h.start()
	stormPR := h.openPR("storm", map[string]int{"create-order/billing": 4, "create-order/audit": 4, "payments/ledger": 2})
	other := h.addRepo("ledger")
	other.Branch("entries")
	other.WriteFile("streams/main.tf", streamroot.MainTF(h.repoState("ledger"), h.simURL, map[string]int{"ledger/entries": 2}))
	other.Commit("add ledger entries")
	otherPR := h.gh.OpenPR(owner, "ledger", githubtest.PullRequest{HeadRef: "entries", User: author})

	// Everything arrives at once: the storm, then the other repository's PR.
	const n = 12
	paused.Store(true)
	stormJobs := h.stormBy(stormPR, n, func(int) string { return approver })
	code, r := h.deliver("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, "ledger", otherPR.Number)))
	require.Equal(t, 202, code, r.Reason)
	planJob := r.JobID
	// The storm's run is slow: GitHub holds its first reaction.
	h.gh.Inject(githubtest.Fault{Method: "POST", Pattern: "/repos/" + owner + "/" + repoName + "/issues/comments/*/reactions", Hang: true})
	paused.Store(false)

	h.waitJob(planJob)
	ran := 0
	for _, id := range stormJobs[1:] {
		j, err := h.st.GetJob(context.Background(), id)
		require.NoError(t, err)
		if j.Attempts > 0 {
			ran++
		}
	}
	require.Zero(t, ran, "no storm job took the other worker before the other repository's plan")
	first, err := h.st.GetJob(context.Background(), stormJobs[0])
	require.NoError(t, err)
	require.Equal(t, store.JobRunning, first.State, "the storm's run is still held by GitHub")

	h.gh.ReleaseHangs()
	h.waitJobs(stormJobs, 3*time.Minute)
	var replies []githubtest.Comment
	for _, c := range h.gh.Comments(owner, repoName, stormPR.Number) {
		if c.User == h.gh.BotLogin() && strings.Contains(c.Body, strings.TrimSpace(strings.SplitN(prcommand.HelpText, "\n", 2)[0])) {
			replies = append(replies, c)
		}
	}
	require.Len(t, replies, 1, "one reply for the whole storm")
	require.Contains(t, replies[0].Body, fmt.Sprintf("This answers %d comments identical to it too", n-1))
	comments := h.gh.Comments(owner, repoName, stormPR.Number)
	named := 0
	for _, c := range comments {
		if c.User == approver && strings.Contains(replies[0].Body, fmt.Sprintf("#issuecomment-%d)", c.ID)) {
			named++
		}
	}
	require.Equal(t, n-1, named, "the reply links every duplicate")
	for _, id := range stormJobs[1:] {
		j, err := h.st.GetJob(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, stormJobs[0], j.CoalescedInto)
	}
}

// The comment a coalesced run stands on may be deleted before it runs: the
// first duplicate still there is answered in its place, naming the others.
func TestACoalescedRunWhoseCommentWasDeletedAnswersTheNext(t *testing.T) {
	if testing.Short() {
		t.Skip("terraform")
	}
	h := newHarnessBase(t)
	var paused atomic.Bool
	h.tune = func(s *Server) {
		health := s.dispatcher.Paused
		s.dispatcher.Paused = func() bool { return paused.Load() || health() }
	}
	h.start()
	pr := h.openPR("storm", map[string]int{"create-order/billing": 4, "create-order/audit": 4, "payments/ledger": 2})
	paused.Store(true)
	jobs := h.stormBy(pr, 4, func(int) string { return approver })
	comments := h.gh.Comments(owner, repoName, pr.Number)
	var storm []githubtest.Comment
	for _, c := range comments {
		if c.User == approver {
			storm = append(storm, c)
		}
	}
	require.Len(t, storm, 4)
	h.gh.DeleteComment(owner, repoName, storm[0].ID)
	paused.Store(false)
	h.waitJobs(jobs, 3*time.Minute)

	var replies []githubtest.Comment
	for _, c := range h.gh.Comments(owner, repoName, pr.Number) {
		if c.User == h.gh.BotLogin() && strings.Contains(c.Body, "shardgate:reply") {
			replies = append(replies, c)
		}
	}
	require.Len(t, replies, 1)
	require.True(t, strings.HasPrefix(replies[0].Body, fmt.Sprintf("<!-- shardgate:reply %d ", storm[1].ID)), replies[0].Body)
	require.Contains(t, replies[0].Body, "This answers 2 comments identical to it too")
	for _, c := range storm[2:] {
		require.Contains(t, replies[0].Body, fmt.Sprintf("#issuecomment-%d)", c.ID))
	}
	require.Len(t, h.gh.Reactions(owner, repoName, storm[1].ID), 1)
}
