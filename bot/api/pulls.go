package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/store/records"
)

// verdict is a pull request's judgement as shardgate last made it.
type verdict struct {
	Repository  string `json:"repository"`
	PullRequest int    `json:"pull_request"`
	HeadSHA     string `json:"head_sha"`
	// Allowed: every project planned for the head is judged and allowed
	// (what the aggregate `shardgate` check says).
	Allowed     bool             `json:"allowed"`
	ConfigError string           `json:"config_error,omitempty"`
	Projects    []projectVerdict `json:"projects"`
}

type projectVerdict struct {
	Project string `json:"project"`
	HeadSHA string `json:"head_sha"`
	// Status is "in_progress" until judged, then "completed", as the check
	// run's; Conclusion is the check run's conclusion once completed.
	Status       string        `json:"status"`
	Conclusion   string        `json:"conclusion,omitempty"`
	Allowed      bool          `json:"allowed"`
	Error        string        `json:"error,omitempty"`
	Denied       []denial      `json:"denied_by"`
	Waivers      []waiver      `json:"waivers"`
	Attestations []attestation `json:"attestations"`
	PlannedAt    time.Time     `json:"planned_at"`
}

type denial struct {
	Rule           string `json:"rule"`
	Message        string `json:"message"`
	StreamPrefix   string `json:"stream_prefix,omitempty"`
	ConsumerGroup  string `json:"consumer_group,omitempty"`
	Waivable       bool   `json:"waivable"`
	ExceptionLabel string `json:"exception_label,omitempty"`
}

type waiver struct {
	Rule          string `json:"rule"`
	Label         string `json:"label"`
	Actor         string `json:"actor,omitempty"`
	StreamPrefix  string `json:"stream_prefix,omitempty"`
	ConsumerGroup string `json:"consumer_group,omitempty"`
	Message       string `json:"message"`
}

type attestation struct {
	StreamPrefix string    `json:"stream_prefix"`
	Actor        string    `json:"actor"`
	HeadSHA      string    `json:"head_sha,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at"`
}

// pull answers GET /api/v1/repos/{owner}/{repo}/pulls/{number}.
func (h *Handler) pull(w http.ResponseWriter, r *http.Request) (int, any, error) {
	n, err := strconv.Atoi(r.PathValue("number"))
	if err != nil || n <= 0 {
		return 0, nil, fail(http.StatusBadRequest, "the pull request number must be a positive whole number")
	}
	ref := pullreq.Ref{Owner: r.PathValue("owner"), Repo: r.PathValue("repo"), Number: n}
	st, err := h.o.Records.PR(r.Context(), ref)
	if err != nil {
		return 0, nil, err
	}
	if st == nil {
		return 0, nil, fail(http.StatusNotFound, "shardgate knows no pull request "+ref.String())
	}
	plans, err := h.o.Records.Plans(r.Context(), ref, st.HeadSHA)
	if err != nil {
		return 0, nil, err
	}
	v := verdict{Repository: ref.FullName(), PullRequest: n, HeadSHA: st.HeadSHA, ConfigError: st.ConfigError,
		Projects: []projectVerdict{}}
	v.Allowed = st.ConfigError == ""
	planned, selected := map[string]bool{}, map[string]bool{}
	for _, name := range st.Projects {
		selected[name] = true
	}
	for _, p := range records.OrderPlans(plans, st.Projects) {
		if len(selected) > 0 && !selected[p.Project] {
			continue // planned for this head before the selection changed
		}
		pv := projectView(p)
		planned[p.Project] = true
		v.Allowed = v.Allowed && pv.Allowed
		v.Projects = append(v.Projects, pv)
	}
	for _, name := range st.Projects {
		if !planned[name] { // selected, its record not written yet
			v.Allowed = false
			v.Projects = append(v.Projects, projectVerdict{Project: name, HeadSHA: st.HeadSHA, Status: "in_progress",
				Denied: []denial{}, Waivers: []waiver{}, Attestations: []attestation{}})
		}
	}
	return http.StatusOK, v, nil
}

func projectView(p *records.Plan) projectVerdict {
	pv := projectVerdict{Project: p.Project, HeadSHA: p.HeadSHA, Status: "in_progress", Conclusion: p.CheckConclusion(),
		Error: p.Error, PlannedAt: p.PlannedAt, Denied: []denial{}, Waivers: []waiver{}, Attestations: []attestation{}}
	if pv.Conclusion != "" {
		pv.Status = "completed"
	}
	pv.Allowed = pv.Conclusion == records.ConclusionSuccess
	for _, d := range p.Decision.Violations {
		pv.Denied = append(pv.Denied, denial{Rule: d.Rule, Message: d.Message, StreamPrefix: d.StreamPrefix,
			ConsumerGroup: d.ConsumerGroup, Waivable: d.Waivable, ExceptionLabel: d.ExceptionLabel})
	}
	for _, e := range p.Decision.ExceptionsApplied {
		pv.Waivers = append(pv.Waivers, waiver{Rule: e.Rule, Label: e.Label, Actor: e.Actor, StreamPrefix: e.StreamPrefix,
			ConsumerGroup: e.ConsumerGroup, Message: e.Message})
	}
	for _, a := range p.Decision.AttestationsUsed {
		pv.Attestations = append(pv.Attestations, attestation{StreamPrefix: a.StreamPrefix, Actor: a.Actor, HeadSHA: a.HeadSHA,
			CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt})
	}
	return pv
}
