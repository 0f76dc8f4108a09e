package githubtest

// Test-side setup and inspection of the fake's state. Setup helpers fail the
// test that created the Server; call them from its goroutine.

// RepoOption tunes a repository added with AddRepo.
type RepoOption func(*repo)

// InInstallation puts the repository in an installation (default
// DefaultInstallationID); only that installation's tokens can reach it.
func InInstallation(id int64) RepoOption { return func(r *repo) { r.installationID = id } }

// DefaultBranch sets the default branch (default "main").
func DefaultBranch(name string) RepoOption { return func(r *repo) { r.defaultBranch = name } }

// AddRepo registers a repository whose commits come from git.
func (s *Server) AddRepo(owner, name string, git *GitRepo, opts ...RepoOption) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &repo{
		owner: owner, name: name, id: s.id(), installationID: DefaultInstallationID,
		defaultBranch: "main", git: git, pulls: map[int]*PullRequest{}, issues: map[int]*Issue{}, nextNumber: 1,
		comments: map[int64]*Comment{}, reactions: map[int64][]*Reaction{},
		events: map[int][]*IssueEvent{}, checkRuns: map[int64]*CheckRun{},
		permissions: map[string]string{},
	}
	for _, o := range opts {
		o(r)
	}
	s.repos[r.fullName()] = r
}

// RepoID is the numeric id GitHub would give the repository.
func (s *Server) RepoID(owner, name string) int64 {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mustRepo(owner, name).id
}

func (s *Server) mustRepo(owner, name string) *repo {
	s.t.Helper()
	r := s.repos[owner+"/"+name]
	if r == nil {
		s.t.Fatalf("githubtest: repository %s/%s was not added", owner, name)
	}
	return r
}

func (s *Server) mustPR(owner, name string, number int) (*repo, *PullRequest) {
	s.t.Helper()
	r := s.mustRepo(owner, name)
	pr := r.pulls[number]
	if pr == nil {
		s.t.Fatalf("githubtest: %s/%s has no pull request #%d", owner, name, number)
	}
	return r, pr
}

// OpenPR opens a pull request. Number defaults to the next free one, State
// to open, BaseRef to the default branch; HeadSHA and BaseSHA are resolved
// from the branches of the repository's git repo when empty.
func (s *Server) OpenPR(owner, name string, pr PullRequest) PullRequest {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(owner, name)
	p := pr.clone()
	if p.Number == 0 {
		p.Number = r.nextNumber
	}
	if r.pulls[p.Number] != nil || r.issues[p.Number] != nil {
		s.t.Fatalf("githubtest: %s already has pull request or issue #%d", r.fullName(), p.Number)
	}
	if p.Number >= r.nextNumber {
		r.nextNumber = p.Number + 1
	}
	if p.State == "" {
		p.State = "open"
	}
	if p.BaseRef == "" {
		p.BaseRef = r.defaultBranch
	}
	if p.Title == "" {
		p.Title = "Change " + p.HeadRef
	}
	if p.Created.IsZero() {
		p.Created = s.now().UTC()
	}
	p.updated = p.Created
	if p.HeadRef == "" && p.HeadSHA == "" {
		s.t.Fatalf("githubtest: pull request #%d of %s needs a HeadRef or a HeadSHA", p.Number, r.fullName())
	}
	s.resolvePR(r, &p)
	r.pulls[p.Number] = &p
	for _, l := range p.Labels {
		s.appendEvent(r, p.Number, "labeled", l, p.User)
	}
	return p.clone()
}

// SyncPR re-reads the head branch after the test pushed commits to it, like
// a push to the PR, and returns the new head sha. The base sha is refreshed
// too.
func (s *Server) SyncPR(owner, name string, number int) string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, pr := s.mustPR(owner, name, number)
	pr.HeadSHA, pr.BaseSHA = "", ""
	s.resolvePR(r, pr)
	s.touch(pr)
	return pr.HeadSHA
}

func (s *Server) resolvePR(r *repo, p *PullRequest) {
	s.t.Helper()
	if r.git == nil {
		return
	}
	var err error
	if p.HeadSHA == "" && p.HeadRef != "" {
		if p.HeadSHA, err = r.git.Resolve(p.HeadRef); err != nil {
			s.t.Fatalf("githubtest: head of %s#%d: %v", r.fullName(), p.Number, err)
		}
	}
	if p.BaseSHA == "" {
		if p.BaseSHA, err = r.git.Resolve(p.BaseRef); err != nil {
			s.t.Fatalf("githubtest: base of %s#%d: %v", r.fullName(), p.Number, err)
		}
	}
}

// SetDraft marks a pull request draft or ready for review.
func (s *Server) SetDraft(owner, name string, number int, draft bool) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, pr := s.mustPR(owner, name, number)
	pr.Draft = draft
	s.touch(pr)
}

// ClosePR closes a pull request, merged or not.
func (s *Server) ClosePR(owner, name string, number int, merged bool) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, pr := s.mustPR(owner, name, number)
	pr.State, pr.Merged = "closed", merged
	s.touch(pr)
}

// MergePR closes a pull request as merged by mergedBy into mergeCommitSHA,
// a commit the test already made on the base branch (GitRepo.Merge).
func (s *Server) MergePR(owner, name string, number int, mergedBy, mergeCommitSHA string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, pr := s.mustPR(owner, name, number)
	pr.State, pr.Merged, pr.MergedBy, pr.MergeCommitSHA = "closed", true, mergedBy, mergeCommitSHA
	s.touch(pr)
}

// PR returns a copy of a pull request.
func (s *Server) PR(owner, name string, number int) PullRequest {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, pr := s.mustPR(owner, name, number)
	return pr.clone()
}

// AddLabel is a user adding a label in the UI: it records a labeled event
// with that actor. Adding a label already present does nothing, as on GitHub.
func (s *Server) AddLabel(owner, name string, number int, label, actor string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, pr := s.mustPR(owner, name, number)
	s.addLabel(r, pr, label, actor)
}

// RemoveLabel is a user removing a label; it records an unlabeled event.
func (s *Server) RemoveLabel(owner, name string, number int, label, actor string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, pr := s.mustPR(owner, name, number)
	s.removeLabel(r, pr, label, actor)
}

func (s *Server) addLabel(r *repo, pr *PullRequest, label, actor string) {
	if hasLabel(pr.Labels, label) {
		return
	}
	pr.Labels = append(pr.Labels, label)
	s.touch(pr)
	s.appendEvent(r, pr.Number, "labeled", label, actor)
}

func (s *Server) removeLabel(r *repo, pr *PullRequest, label, actor string) bool {
	if !hasLabel(pr.Labels, label) {
		return false
	}
	pr.Labels = removeLabel(pr.Labels, label)
	s.touch(pr)
	s.appendEvent(r, pr.Number, "unlabeled", label, actor)
	return true
}

func (s *Server) appendEvent(r *repo, number int, event, label, actor string) {
	r.events[number] = append(r.events[number], &IssueEvent{
		ID: s.id(), Event: event, Label: label, Actor: actor, CreatedAt: s.now().UTC(),
	})
}

// Labels returns the labels on a pull request, in the order they were added.
func (s *Server) Labels(owner, name string, number int) []string {
	return s.PR(owner, name, number).Labels
}

// IssueEvents returns the labeled/unlabeled events of a pull request.
func (s *Server) IssueEvents(owner, name string, number int) []IssueEvent {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(owner, name)
	var out []IssueEvent
	for _, e := range r.events[number] {
		out = append(out, *e)
	}
	return out
}

// AddComment is a user commenting on a pull request.
func (s *Server) AddComment(owner, name string, number int, user, body string) Comment {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, _ := s.mustPR(owner, name, number)
	return *s.addComment(r, number, user, body)
}

func (s *Server) addComment(r *repo, number int, user, body string) *Comment {
	now := s.now().UTC()
	c := &Comment{ID: s.id(), Issue: number, User: user, Body: body, CreatedAt: now, UpdatedAt: now}
	r.comments[c.ID] = c
	return c
}

// DeleteComment deletes a comment, as its author may on GitHub.
func (s *Server) DeleteComment(owner, name string, id int64) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mustRepo(owner, name).comments, id)
}

// Comments returns the comments on a pull request, oldest first.
func (s *Server) Comments(owner, name string, number int) []Comment {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(owner, name)
	var out []Comment
	for _, id := range sortedKeys(r.comments) {
		if c := r.comments[id]; c.Issue == number {
			out = append(out, *c)
		}
	}
	return out
}

// Reactions returns the reactions on a comment.
func (s *Server) Reactions(owner, name string, commentID int64) []Reaction {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Reaction
	for _, re := range s.mustRepo(owner, name).reactions[commentID] {
		out = append(out, *re)
	}
	return out
}

// CheckRuns returns the repository's check runs in creation order.
func (s *Server) CheckRuns(owner, name string) []CheckRun {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(owner, name)
	var out []CheckRun
	for _, id := range sortedKeys(r.checkRuns) {
		out = append(out, *r.checkRuns[id])
	}
	return out
}

// Statuses returns the commit statuses created in the repository.
func (s *Server) Statuses(owner, name string) []CommitStatus {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CommitStatus
	for _, st := range s.mustRepo(owner, name).statuses {
		out = append(out, *st)
	}
	return out
}

// AddTeamMember makes user an active member of org/slug.
func (s *Server) AddTeamMember(org, slug, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := org + "/" + slug
	if s.teams[key] == nil {
		s.teams[key] = map[string]bool{}
	}
	s.teams[key][user] = true
}

// RemoveTeamMember ends user's membership of org/slug.
func (s *Server) RemoveTeamMember(org, slug, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.teams[org+"/"+slug], user)
}

// EditComment is a user editing a comment in the UI: the body changes and
// updated_at moves to now.
func (s *Server) EditComment(owner, name string, id int64, body string) Comment {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.mustRepo(owner, name).comments[id]
	if c == nil {
		s.t.Fatalf("githubtest: %s/%s has no comment %d", owner, name, id)
	}
	c.Body, c.UpdatedAt = body, s.now().UTC()
	return *c
}

// SetPermission sets a user's permission on a repository: admin, write,
// read or none (the default).
func (s *Server) SetPermission(owner, name, user, permission string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustRepo(owner, name).permissions[user] = permission
}
