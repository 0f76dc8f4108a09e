package githubtest

import (
	"encoding/json"
	"sort"
	"strconv"
	"time"
)

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
		// Annotations are counted and kept by path and message.
		Annotations []struct {
			Path    string `json:"path"`
			Level   string `json:"annotation_level"`
			Message string `json:"message"`
		} `json:"annotations"`
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
		for _, a := range in.Output.Annotations { // GitHub appends them
			cr.Annotations = append(cr.Annotations, a.Level+" "+a.Path+": "+a.Message)
		}
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

// listCheckRunsForRef answers GET /repos/{owner}/{repo}/commits/{ref}/check-runs
// for a commit SHA, newest first, filtered by check_name, status and app_id
// (every run here is the App's). filter=latest (GitHub's default) keeps the
// newest run of each name; filter=all keeps every run.
func listCheckRunsForRef(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found {
		return notFound()
	}
	q := c.r.URL.Query()
	name, status := q.Get("check_name"), q.Get("status")
	if app := q.Get("app_id"); app != "" && app != strconv.FormatInt(s.appID, 10) {
		return ok(map[string]any{"total_count": 0, "check_runs": []any{}})
	}
	var runs []*CheckRun
	for _, cr := range r.checkRuns {
		if cr.HeadSHA == c.params["ref"] && (name == "" || cr.Name == name) && (status == "" || cr.Status == status) {
			runs = append(runs, cr)
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID > runs[j].ID })
	out := make([]any, 0, len(runs))
	seen := map[string]bool{}
	for _, cr := range runs {
		if q.Get("filter") != "all" && seen[cr.Name] {
			continue
		}
		seen[cr.Name] = true
		out = append(out, s.checkRunJSON(r, cr))
	}
	return ok(map[string]any{"total_count": len(out), "check_runs": out})
}
