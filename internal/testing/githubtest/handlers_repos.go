package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

func listLabels(s *Server, c *call) reply {
	r, pr, found := s.issueOf(c)
	if !found {
		return notFound()
	}
	return paginate(c, s.labelsJSON(r, pr.Labels))
}

// labelNames accepts every request shape the spec allows for adding or
// setting labels.
func labelNames(body []byte) []string {
	var names []string
	if json.Unmarshal(body, &names) == nil {
		return names
	}
	var wrapped struct {
		Labels json.RawMessage `json:"labels"`
	}
	if json.Unmarshal(body, &wrapped) == nil && wrapped.Labels != nil {
		body = wrapped.Labels
		if json.Unmarshal(body, &names) == nil {
			return names
		}
	}
	var objs []struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(body, &objs) == nil {
		for _, o := range objs {
			names = append(names, o.Name)
		}
		return names
	}
	var one string
	if json.Unmarshal(body, &one) == nil {
		return []string{one}
	}
	return nil
}

func addLabels(s *Server, c *call) reply {
	r, pr, found := s.issueOf(c)
	if !found {
		return notFound()
	}
	for _, l := range labelNames(c.body) {
		s.addLabel(r, pr, l, s.botLogin)
	}
	return ok(s.labelsJSON(r, pr.Labels))
}

func setLabels(s *Server, c *call) reply {
	r, pr, found := s.issueOf(c)
	if !found {
		return notFound()
	}
	want := labelNames(c.body)
	for _, l := range append([]string(nil), pr.Labels...) {
		if !hasLabel(want, l) {
			s.removeLabel(r, pr, l, s.botLogin)
		}
	}
	for _, l := range want {
		s.addLabel(r, pr, l, s.botLogin)
	}
	return ok(s.labelsJSON(r, pr.Labels))
}

func clearLabels(s *Server, c *call) reply {
	r, pr, found := s.issueOf(c)
	if !found {
		return notFound()
	}
	for _, l := range append([]string(nil), pr.Labels...) {
		s.removeLabel(r, pr, l, s.botLogin)
	}
	return noContent()
}

func deleteLabel(s *Server, c *call) reply {
	r, pr, found := s.issueOf(c)
	if !found {
		return notFound()
	}
	if !s.removeLabel(r, pr, c.params["name"], s.botLogin) {
		return reply{status: http.StatusNotFound, body: errorBody("Label does not exist")}
	}
	return ok(s.labelsJSON(r, pr.Labels))
}

func getPull(s *Server, c *call) reply {
	r, pr, found := s.issueOf(c)
	if !found {
		return notFound()
	}
	return ok(s.pullJSON(r, pr))
}

func updatePull(s *Server, c *call) reply {
	r, pr, found := s.issueOf(c)
	if !found {
		return notFound()
	}
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
	}
	_ = json.Unmarshal(c.body, &in)
	if in.Title != nil {
		pr.Title = *in.Title
	}
	if in.Body != nil {
		pr.Body = *in.Body
	}
	if in.State != nil {
		pr.State = *in.State
	}
	s.touch(pr)
	return ok(s.pullJSON(r, pr))
}

func createStatus(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found {
		return notFound()
	}
	var in struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	_ = json.Unmarshal(c.body, &in)
	if in.Context == "" {
		in.Context = "default"
	}
	st := &CommitStatus{ID: s.id(), SHA: c.params["sha"], State: in.State, Context: in.Context,
		Description: in.Description, TargetURL: in.TargetURL, Creator: s.botLogin}
	r.statuses = append(r.statuses, st)
	now := ts(s.now())
	return created(merge(s.spec.skeleton("status"), map[string]any{
		"id": st.ID, "node_id": nodeID("StatusContext", st.ID), "state": st.State, "context": st.Context,
		"description": st.Description, "target_url": st.TargetURL,
		"url":        fmt.Sprintf("%srepos/%s/statuses/%s", s.URL(), r.fullName(), st.SHA),
		"avatar_url": nil, "created_at": now, "updated_at": now, "creator": s.userJSON(s.botLogin),
	}))
}

func getPermission(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found {
		return notFound()
	}
	user := c.params["username"]
	perm := r.permissions[user]
	if perm == "" {
		perm = "none"
	}
	return ok(merge(s.spec.skeleton("repository-collaborator-permission"), map[string]any{
		"permission": perm, "user": s.userJSON(user),
	}))
}

func getTeamMembership(s *Server, c *call) reply {
	p := c.params
	if !s.teams[p["org"]+"/"+p["team_slug"]][p["username"]] {
		return notFound()
	}
	return ok(merge(s.spec.skeleton("team-membership"), map[string]any{
		"role": "member", "state": "active",
		"url": fmt.Sprintf("%sorganizations/%s/team/%s/memberships/%s", s.URL(), url.PathEscape(p["org"]), url.PathEscape(p["team_slug"]), url.PathEscape(p["username"])),
	}))
}
