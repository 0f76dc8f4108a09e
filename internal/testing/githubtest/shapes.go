package githubtest

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// The functions below overlay the fake's state on schema skeletons; callers
// hold s.mu.

func (s *Server) userID(login string) int64 {
	if id, ok := s.userIDs[login]; ok {
		return id
	}
	id := s.id()
	s.userIDs[login] = id
	return id
}

func nodeID(kind string, id int64) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%s%d", kind, id)))
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *Server) userJSON(login string) map[string]any {
	u := s.spec.skeleton("simple-user")
	id := s.userID(login)
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return merge(u, map[string]any{
		"login": login, "id": id, "node_id": nodeID("User", id), "type": typ,
		"url": s.URL() + "users/" + login, "html_url": "https://github.example/" + login,
		"avatar_url": "https://avatars.github.example/u/" + fmt.Sprint(id),
	})
}

func (s *Server) repoJSON(r *repo) map[string]any {
	return s.repoNamedJSON(r, r.fullName())
}

// repoNamedJSON describes r under another full name too, for the head
// repository of a fork PR.
func (s *Server) repoNamedJSON(r *repo, fullName string) map[string]any {
	owner, name, _ := strings.Cut(fullName, "/")
	id := r.id
	if fullName != r.fullName() {
		id = s.userID("repo:" + fullName)
	}
	m := s.spec.skeleton("repository")
	return merge(m, map[string]any{
		"id": id, "node_id": nodeID("Repository", id), "name": name, "full_name": fullName,
		"owner": s.userJSON(owner), "private": false, "fork": fullName != r.fullName(),
		"default_branch": r.defaultBranch,
		"created_at":     skeletonTime, "updated_at": skeletonTime, "pushed_at": skeletonTime,
		"url": s.URL() + "repos/" + fullName, "html_url": "https://github.example/" + fullName,
	})
}

func (s *Server) labelJSON(r *repo, name string) map[string]any {
	id := s.userID("label:" + r.fullName() + ":" + name)
	return merge(s.spec.skeleton("label"), map[string]any{
		"id": id, "node_id": nodeID("Label", id), "name": name, "color": "ededed",
		"url": s.URL() + "repos/" + r.fullName() + "/labels/" + name, "description": nil, "default": false,
	})
}

func (s *Server) labelsJSON(r *repo, labels []string) []any {
	out := []any{}
	for _, l := range labels {
		out = append(out, s.labelJSON(r, l))
	}
	return out
}

func (s *Server) commentJSON(r *repo, c *Comment) map[string]any {
	base := s.URL() + "repos/" + r.fullName()
	return merge(s.spec.skeleton("issue-comment"), map[string]any{
		"id": c.ID, "node_id": nodeID("IssueComment", c.ID), "body": c.Body,
		"user": s.userJSON(c.User), "author_association": s.association(r, c.User),
		"url":        fmt.Sprintf("%s/issues/comments/%d", base, c.ID),
		"issue_url":  fmt.Sprintf("%s/issues/%d", base, c.Issue),
		"html_url":   fmt.Sprintf("https://github.example/%s/pull/%d#issuecomment-%d", r.fullName(), c.Issue, c.ID),
		"created_at": ts(c.CreatedAt), "updated_at": ts(c.UpdatedAt),
	})
}

// association follows GitHub: OWNER for the repository owner, MEMBER or
// COLLABORATOR for users with write access, NONE otherwise.
func (s *Server) association(r *repo, login string) string {
	switch {
	case login == r.owner:
		return "OWNER"
	case r.permissions[login] == "admin" || r.permissions[login] == "write":
		return "COLLABORATOR"
	}
	return "NONE"
}

func (s *Server) reactionJSON(re *Reaction) map[string]any {
	return merge(s.spec.skeleton("reaction"), map[string]any{
		"id": re.ID, "node_id": nodeID("Reaction", re.ID), "user": s.userJSON(re.User),
		"content": re.Content, "created_at": ts(s.now()),
	})
}

func (s *Server) eventJSON(r *repo, e *IssueEvent) map[string]any {
	schema := "labeled-issue-event"
	if e.Event == "unlabeled" {
		schema = "unlabeled-issue-event"
	}
	return merge(s.spec.skeleton(schema), map[string]any{
		"id": e.ID, "node_id": nodeID("LabeledEvent", e.ID), "event": e.Event,
		"url":        fmt.Sprintf("%srepos/%s/issues/events/%d", s.URL(), r.fullName(), e.ID),
		"actor":      s.userJSON(e.Actor),
		"label":      map[string]any{"name": e.Label, "color": "ededed"},
		"created_at": ts(e.CreatedAt), "commit_id": nil, "commit_url": nil,
		"performed_via_github_app": nil,
	})
}

func (s *Server) checkRunJSON(r *repo, cr *CheckRun) map[string]any {
	m := merge(s.spec.skeleton("check-run"), map[string]any{
		"id": cr.ID, "node_id": nodeID("CheckRun", cr.ID), "name": cr.Name, "head_sha": cr.HeadSHA,
		"status": cr.Status, "conclusion": nilIfEmpty(cr.Conclusion),
		"external_id": cr.ExternalID, "details_url": nilIfEmpty(cr.DetailsURL),
		"url":        fmt.Sprintf("%srepos/%s/check-runs/%d", s.URL(), r.fullName(), cr.ID),
		"html_url":   fmt.Sprintf("https://github.example/%s/runs/%d", r.fullName(), cr.ID),
		"started_at": timeOrNil(cr.StartedAt), "completed_at": timeOrNil(cr.CompletedAt),
		"output": map[string]any{
			"title": nilIfEmpty(cr.Title), "summary": nilIfEmpty(cr.Summary), "text": nilIfEmpty(cr.Text),
			"annotations_count": 0, "annotations_url": fmt.Sprintf("%srepos/%s/check-runs/%d/annotations", s.URL(), r.fullName(), cr.ID),
		},
		"check_suite":   map[string]any{"id": cr.ID},
		"pull_requests": s.prsForSHA(r, cr.HeadSHA),
	})
	return m
}

func (s *Server) prsForSHA(r *repo, sha string) []any {
	out := []any{}
	for _, n := range sortedKeys(r.pulls) {
		pr := r.pulls[n]
		if pr.HeadSHA != sha || pr.State != "open" {
			continue
		}
		out = append(out, map[string]any{
			"id": int64(pr.Number), "number": pr.Number,
			"url":  fmt.Sprintf("%srepos/%s/pulls/%d", s.URL(), r.fullName(), pr.Number),
			"head": map[string]any{"ref": pr.HeadRef, "sha": pr.HeadSHA, "repo": map[string]any{"id": r.id, "url": s.URL() + "repos/" + r.fullName(), "name": r.name}},
			"base": map[string]any{"ref": pr.BaseRef, "sha": pr.BaseSHA, "repo": map[string]any{"id": r.id, "url": s.URL() + "repos/" + r.fullName(), "name": r.name}},
		})
	}
	return out
}

func (s *Server) pullJSON(r *repo, pr *PullRequest) map[string]any {
	base := fmt.Sprintf("%srepos/%s", s.URL(), r.fullName())
	headRepo := pr.HeadRepo
	if headRepo == "" {
		headRepo = r.fullName()
	}
	headOwner, _, _ := strings.Cut(headRepo, "/")
	var mergedAt, closedAt any
	if pr.State == "closed" {
		closedAt = ts(pr.closed)
		if pr.closed.IsZero() { // closed in OpenPR's argument
			closedAt = ts(pr.updatedAt())
		}
		if pr.Merged {
			mergedAt = closedAt
		}
	}
	var mergedBy any
	if pr.Merged && pr.MergedBy != "" {
		mergedBy = s.userJSON(pr.MergedBy)
	}
	m := s.spec.skeleton("pull-request")
	return merge(m, map[string]any{
		"merge_commit_sha": nilIfEmpty(pr.MergeCommitSHA), "merged_by": mergedBy,
		"id": int64(pr.Number) + r.id*100000, "node_id": nodeID("PullRequest", int64(pr.Number)),
		"number": pr.Number, "state": pr.State, "title": pr.Title, "body": pr.Body,
		"user": s.userJSON(pr.User), "draft": pr.Draft, "merged": pr.Merged, "locked": false,
		"labels": s.labelsJSON(r, pr.Labels), "author_association": s.association(r, pr.User),
		"created_at": ts(pr.Created), "updated_at": ts(pr.updatedAt()), "closed_at": closedAt, "merged_at": mergedAt,
		"url":       fmt.Sprintf("%s/pulls/%d", base, pr.Number),
		"issue_url": fmt.Sprintf("%s/issues/%d", base, pr.Number),
		"html_url":  fmt.Sprintf("https://github.example/%s/pull/%d", r.fullName(), pr.Number),
		"head": map[string]any{
			"ref": pr.HeadRef, "sha": pr.HeadSHA, "label": headOwner + ":" + pr.HeadRef,
			"user": s.userJSON(headOwner), "repo": s.repoNamedJSON(r, headRepo),
		},
		"base": map[string]any{
			"ref": pr.BaseRef, "sha": pr.BaseSHA, "label": r.owner + ":" + pr.BaseRef,
			"user": s.userJSON(r.owner), "repo": s.repoJSON(r),
		},
	})
}

func nilIfEmpty(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ts(t)
}
