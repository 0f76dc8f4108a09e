package githubtest

import (
	"fmt"
	"strings"
)

// MergeGroup is a merge group of the fake's merge queue: the commit GitHub
// builds to land the queued pull requests (Numbers, in queue order) on top of
// BaseSHA (the base branch's head, or the head of the group ahead).
type MergeGroup struct {
	HeadSHA, HeadRef string // HeadRef: refs/heads/gh-readonly-queue/<branch>/pr-<N>-<base sha>
	BaseSHA, BaseRef string // BaseRef: refs/heads/<branch>
	Numbers          []int
}

// QueueMergeGroup builds a merge group as GitHub's merge queue does: the
// branch gh-readonly-queue/<base branch>/pr-<N>-<base sha>, N the last pull
// request, off base (the default branch's head when after is nil, else the
// head of the group ahead), merging each pull request's head in order with
// a merge commit. The work tree is left on the group's branch.
func (s *Server) QueueMergeGroup(owner, name string, after *MergeGroup, numbers ...int) MergeGroup {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(owner, name)
	if r.git == nil || len(numbers) == 0 {
		s.t.Fatalf("githubtest: a merge group needs a git repository and pull requests")
	}
	g := MergeGroup{BaseRef: "refs/heads/" + r.defaultBranch, Numbers: append([]int(nil), numbers...)}
	if after != nil {
		g.BaseSHA = after.HeadSHA
	} else {
		var err error
		if g.BaseSHA, err = r.git.Resolve(r.defaultBranch); err != nil {
			s.t.Fatalf("githubtest: %v", err)
		}
	}
	branch := fmt.Sprintf("gh-readonly-queue/%s/pr-%d-%s", r.defaultBranch, numbers[len(numbers)-1], g.BaseSHA)
	r.git.must("checkout", "--quiet", "-B", branch, g.BaseSHA)
	for _, n := range numbers {
		pr := r.pulls[n]
		if pr == nil {
			s.t.Fatalf("githubtest: no pull request %s#%d", r.fullName(), n)
		}
		r.git.must("merge", "--quiet", "--no-ff", "--message", fmt.Sprintf("Merge pull request #%d from %s", n, pr.HeadRef), pr.HeadSHA)
	}
	g.HeadSHA, g.HeadRef = r.git.Head(), "refs/heads/"+branch
	return g
}

// listPullsForCommit answers GitHub's "List pull requests associated with a
// commit": the merged pull request whose merge commit it is, and, for a
// commit not on the default branch, the open pull requests whose head holds it.
func listPullsForCommit(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found || r.git == nil {
		return notFound()
	}
	sha, err := r.git.Resolve(c.params["commit_sha"])
	if err != nil {
		return unprocessable("No commit found for SHA: " + c.params["commit_sha"])
	}
	onDefault := r.git.isAncestor(sha, r.defaultBranch)
	out := []any{}
	for _, n := range sortedKeys(r.pulls) {
		pr := r.pulls[n]
		merged := pr.Merged && strings.EqualFold(pr.MergeCommitSHA, sha)
		holds := !onDefault && pr.State == "open" && (pr.HeadSHA == sha || r.git.isAncestor(sha, pr.HeadSHA))
		if merged || holds {
			out = append(out, merge(s.spec.skeleton("pull-request-simple"), s.pullJSON(r, pr)))
		}
	}
	return paginate(c, out)
}

// MergeGroupPayload holds the fields a merge_group payload is changed to.
type MergeGroupPayload struct {
	InstallationID int64
	Owner, Repo    string
	RepoID         int64
	Group          MergeGroup
}

// MergeGroupPayload describes a merge group of the fake as its webhook would.
func (s *Server) MergeGroupPayload(owner, name string, g MergeGroup) MergeGroupPayload {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(owner, name)
	return MergeGroupPayload{InstallationID: r.installationID, Owner: owner, Repo: name, RepoID: r.id, Group: g}
}

func (p MergeGroupPayload) apply(m map[string]any) {
	Set(m, "installation.id", p.InstallationID)
	setRepository(m, "repository.", p.Owner, p.Repo, p.RepoID)
	Set(m, "organization.login", p.Owner)
	Set(m, "merge_group.head_sha", p.Group.HeadSHA)
	Set(m, "merge_group.head_ref", p.Group.HeadRef)
	Set(m, "merge_group.base_sha", p.Group.BaseSHA)
	Set(m, "merge_group.base_ref", p.Group.BaseRef)
	Set(m, "merge_group.head_commit.id", p.Group.HeadSHA)
}

// MergeGroupChecksRequested derives from merge_group/checks_requested.payload.json:
// GitHub asks for the required checks on the group's head.
func MergeGroupChecksRequested(t TB, p MergeGroupPayload) []byte {
	t.Helper()
	return Webhook(t, "merge_group", "checks_requested.payload", p.apply)
}

// MergeGroupDestroyed derives from merge_group/destroyed.payload.json (see
// testdata/PROVENANCE.md): the group left the queue for reason (merged,
// invalidated, dequeued).
func MergeGroupDestroyed(t TB, p MergeGroupPayload, reason string) []byte {
	t.Helper()
	return Webhook(t, "merge_group", "destroyed.payload", func(m map[string]any) {
		p.apply(m)
		Set(m, "reason", reason)
	})
}
