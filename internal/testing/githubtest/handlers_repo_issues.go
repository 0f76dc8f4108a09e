package githubtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Issues that are not pull requests: created, listed (with the pull requests,
// as GitHub lists them), read and edited. Comments on them share the issue
// comment handlers with pull requests.

// CreateIssue opens an issue as user, as a person would on GitHub, and
// returns it.
func (s *Server) CreateIssue(owner, name, user, title, body string, labels ...string) Issue {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.addIssue(s.mustRepo(owner, name), user, title, body, labels)
}

// Issues are the repository's issues (not pull requests), by number.
func (s *Server) Issues(owner, name string) []Issue {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(owner, name)
	out := []Issue{}
	for _, n := range sortedKeys(r.issues) {
		is := *r.issues[n]
		is.Labels = slices.Clone(is.Labels)
		out = append(out, is)
	}
	return out
}

func (s *Server) addIssue(r *repo, user, title, body string, labels []string) *Issue {
	n := r.nextNumber
	for r.pulls[n] != nil || r.issues[n] != nil {
		n++
	}
	r.nextNumber = n + 1
	now := s.now().UTC()
	is := &Issue{Number: n, Title: title, Body: body, User: user, State: "open", Labels: slices.Clone(labels), Created: now, Updated: now}
	r.issues[n] = is
	for _, l := range labels {
		s.appendEvent(r, n, "labeled", l, user)
	}
	return is
}

func (s *Server) plainIssueOf(c *call) (*repo, *Issue, bool) {
	r, found := s.repoOf(c)
	if !found {
		return nil, nil, false
	}
	n, err := strconv.Atoi(c.params["issue_number"])
	if err != nil || r.issues[n] == nil {
		return nil, nil, false
	}
	return r, r.issues[n], true
}

// issueNumberOf is the number of the pull request or issue a call names.
func (s *Server) issueNumberOf(c *call) (*repo, int, bool) {
	if r, pr, found := s.issueOf(c); found {
		return r, pr.Number, true
	}
	if r, is, found := s.plainIssueOf(c); found {
		return r, is.Number, true
	}
	return nil, 0, false
}

func (s *Server) issueJSON(r *repo, is *Issue) map[string]any {
	base := s.URL() + "repos/" + r.fullName()
	comments := 0
	for _, cm := range r.comments {
		if cm.Issue == is.Number {
			comments++
		}
	}
	return merge(s.spec.skeleton("issue"), map[string]any{
		"id": int64(is.Number) + r.id*100000 + 50000, "node_id": nodeID("Issue", int64(is.Number)), "number": is.Number,
		"title": is.Title, "body": is.Body, "state": is.State, "locked": false, "comments": comments,
		"user": s.userJSON(is.User), "author_association": s.association(r, is.User), "labels": s.labelsJSON(r, is.Labels),
		"assignee": nil, "milestone": nil, "closed_at": timeOrNil(is.Closed),
		"created_at": ts(is.Created), "updated_at": ts(is.Updated),
		"url":            fmt.Sprintf("%s/issues/%d", base, is.Number),
		"repository_url": base, "labels_url": fmt.Sprintf("%s/issues/%d/labels{/name}", base, is.Number),
		"comments_url": fmt.Sprintf("%s/issues/%d/comments", base, is.Number),
		"events_url":   fmt.Sprintf("%s/issues/%d/events", base, is.Number),
		"html_url":     fmt.Sprintf("https://github.example/%s/issues/%d", r.fullName(), is.Number),
	})
}

// prIssueJSON is a pull request as the issues list shows it.
func (s *Server) prIssueJSON(r *repo, pr *PullRequest) map[string]any {
	m := s.issueJSON(r, &Issue{Number: pr.Number, Title: pr.Title, Body: pr.Body, User: pr.User, State: pr.State,
		Labels: pr.Labels, Created: pr.Created, Updated: pr.updatedAt()})
	base := s.URL() + "repos/" + r.fullName()
	m["pull_request"] = map[string]any{"url": fmt.Sprintf("%s/pulls/%d", base, pr.Number),
		"html_url": fmt.Sprintf("https://github.example/%s/pull/%d", r.fullName(), pr.Number),
		"diff_url": nil, "patch_url": nil}
	return m
}

// listRepoIssues lists issues and pull requests, newest first, filtered by
// state (default open) and labels (all of a comma-separated list).
func listRepoIssues(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found {
		return notFound()
	}
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	keep := func(st string, labels []string) bool {
		if state != "all" && st != state {
			return false
		}
		for _, w := range want {
			if !slices.Contains(labels, w) {
				return false
			}
		}
		return true
	}
	var numbers []int
	for n, is := range r.issues {
		if keep(is.State, is.Labels) {
			numbers = append(numbers, n)
		}
	}
	for n, pr := range r.pulls {
		if keep(pr.State, pr.Labels) {
			numbers = append(numbers, n)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(numbers)))
	out := []any{}
	for _, n := range numbers {
		if is := r.issues[n]; is != nil {
			out = append(out, s.issueJSON(r, is))
		} else {
			out = append(out, s.prIssueJSON(r, r.pulls[n]))
		}
	}
	return paginate(c, out)
}

type issueBody struct {
	Title  *string   `json:"title"`
	Body   *string   `json:"body"`
	State  *string   `json:"state"`
	Labels *[]string `json:"labels"`
}

func createRepoIssue(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found {
		return notFound()
	}
	var in issueBody
	if err := json.Unmarshal(c.body, &in); err != nil || in.Title == nil || *in.Title == "" {
		return unprocessable("title is required")
	}
	if in.Body != nil && len([]rune(*in.Body)) > maxCommentRunes {
		return unprocessable("body is too long (maximum is 65536 characters)")
	}
	var labels []string
	if in.Labels != nil {
		labels = *in.Labels
	}
	body := ""
	if in.Body != nil {
		body = *in.Body
	}
	return created(s.issueJSON(r, s.addIssue(r, s.botLogin, *in.Title, body, labels)))
}

func getRepoIssue(s *Server, c *call) reply {
	if r, is, found := s.plainIssueOf(c); found {
		return ok(s.issueJSON(r, is))
	}
	if r, pr, found := s.issueOf(c); found {
		return ok(s.prIssueJSON(r, pr))
	}
	return notFound()
}

func editRepoIssue(s *Server, c *call) reply {
	r, is, found := s.plainIssueOf(c)
	if !found {
		return notFound()
	}
	var in issueBody
	if err := json.Unmarshal(c.body, &in); err != nil {
		return unprocessable("invalid body")
	}
	if in.Body != nil && len([]rune(*in.Body)) > maxCommentRunes {
		return unprocessable("body is too long (maximum is 65536 characters)")
	}
	now := s.now().UTC()
	if in.Title != nil {
		is.Title = *in.Title
	}
	if in.Body != nil {
		is.Body = *in.Body
	}
	if in.Labels != nil {
		is.Labels = slices.Clone(*in.Labels)
	}
	if in.State != nil && *in.State != is.State {
		is.State = *in.State
		is.Closed = time.Time{}
		if is.State == "closed" {
			is.Closed = now
		}
	}
	is.Updated = now
	is.Edits++
	return ok(s.issueJSON(r, is))
}
