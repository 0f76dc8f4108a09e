package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

const (
	defaultPerPage = 30
	maxPerPage     = 100
)

// paginate slices a list by per_page/page and sets GitHub's Link header,
// so clients that follow pages are exercised.
func paginate(c *call, items []any) reply {
	q := c.r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = defaultPerPage
	}
	per = min(per, maxPerPage)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	last := max((len(items)+per-1)/per, 1)
	start := min((page-1)*per, len(items))
	end := min(start+per, len(items))
	rep := ok(items[start:end])
	if page < last {
		link := func(p int, rel string) string {
			u := *c.r.URL
			v := u.Query()
			v.Set("page", strconv.Itoa(p))
			v.Set("per_page", strconv.Itoa(per))
			u.RawQuery = v.Encode()
			return fmt.Sprintf(`<http://%s%s>; rel="%s"`, c.r.Host, u.RequestURI(), rel)
		}
		rep.header = http.Header{"Link": {link(page+1, "next") + ", " + link(last, "last")}}
	}
	return rep
}

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

// checkRunInput is the writable part of a check run; pointers tell "not
// sent" from "cleared" on update.
type checkRunInput struct {
	Name        *string    `json:"name"`
	HeadSHA     string     `json:"head_sha"`
	Status      *string    `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	ExternalID  *string    `json:"external_id"`
	DetailsURL  *string    `json:"details_url"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	Output      *struct {
		Title   string `json:"title"`
		Summary string `json:"summary"`
		Text    string `json:"text"`
	} `json:"output"`
}

func (s *Server) applyCheckRun(cr *CheckRun, in checkRunInput) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&cr.Name, in.Name)
	set(&cr.Status, in.Status)
	set(&cr.Conclusion, in.Conclusion)
	set(&cr.ExternalID, in.ExternalID)
	set(&cr.DetailsURL, in.DetailsURL)
	if in.StartedAt != nil {
		cr.StartedAt = *in.StartedAt
	}
	if in.CompletedAt != nil {
		cr.CompletedAt = *in.CompletedAt
	}
	if in.Output != nil {
		cr.Title, cr.Summary, cr.Text = in.Output.Title, in.Output.Summary, in.Output.Text
	}
	// GitHub completes a run given a conclusion, and stamps completion.
	if in.Conclusion != nil && *in.Conclusion != "" {
		cr.Status = "completed"
	}
	if cr.Status == "completed" && cr.CompletedAt.IsZero() {
		cr.CompletedAt = s.now().UTC()
	}
}

func createCheckRun(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found {
		return notFound()
	}
	var in checkRunInput
	if err := json.Unmarshal(c.body, &in); err != nil {
		return unprocessable("invalid check run: " + err.Error())
	}
	cr := &CheckRun{ID: s.id(), HeadSHA: in.HeadSHA, Status: "queued", StartedAt: s.now().UTC()}
	s.applyCheckRun(cr, in)
	r.checkRuns[cr.ID] = cr
	return created(s.checkRunJSON(r, cr))
}

func (s *Server) checkRunOf(c *call) (*repo, *CheckRun, bool) {
	r, found := s.repoOf(c)
	if !found {
		return nil, nil, false
	}
	id, _ := strconv.ParseInt(c.params["check_run_id"], 10, 64)
	cr := r.checkRuns[id]
	return r, cr, cr != nil
}

func getCheckRun(s *Server, c *call) reply {
	r, cr, found := s.checkRunOf(c)
	if !found {
		return notFound()
	}
	return ok(s.checkRunJSON(r, cr))
}

func updateCheckRun(s *Server, c *call) reply {
	r, cr, found := s.checkRunOf(c)
	if !found {
		return notFound()
	}
	var in checkRunInput
	if err := json.Unmarshal(c.body, &in); err != nil {
		return unprocessable("invalid check run: " + err.Error())
	}
	s.applyCheckRun(cr, in)
	cr.Updates++
	return ok(s.checkRunJSON(r, cr))
}
