package bot

import (
	"encoding/json"
	"net/http"

	"github.com/shardgate/shardgate/bot/api"
	"github.com/shardgate/shardgate/bot/apply"
	"github.com/shardgate/shardgate/bot/prcommand"
	"github.com/shardgate/shardgate/store"
)

// withAPI serves the automation API (api.tokens_file) under /api/v1/ beside
// the status page on its listener; its bearer tokens are its own, apart
// from the status page's.
func (s *Server) withAPI(status http.Handler) http.Handler {
	if !s.cfg.API.Enabled() {
		return status
	}
	jobs, ok := s.store.(api.Jobs)
	if !ok {
		s.log.Error("the store cannot list jobs: the automation API is not served")
		return status
	}
	mux := http.NewServeMux()
	// A running job is stopped where it runs (CancelJob); one running on
	// another replica is refused with 409, saying so.
	mux.Handle(api.Prefix, api.New(api.Options{Tokens: s.cfg.API.Tokens, Jobs: jobs, Records: s.rec, Audits: s.store,
		Canceller: apiCanceller{s: s},
		Describe:  describeJob, Log: s.log.WithField("component", "api")}))
	mux.Handle("/", status)
	return mux
}

// describeJob is what a webhook job is about, from its payload.
func describeJob(j *store.Job) api.Subject {
	var pr prPayload
	var p struct {
		Action      string `json:"action"`
		Project     string `json:"project"`
		PullRequest *struct {
			Merged bool `json:"merged"`
		} `json:"pull_request"`
		Comment *struct {
			Body string `json:"body"`
		} `json:"comment"`
	}
	if json.Unmarshal(j.Payload, &pr) != nil || json.Unmarshal(j.Payload, &p) != nil {
		return api.Subject{}
	}
	sub := api.Subject{Repository: jobRepo(j.Payload), PullRequest: pr.number(), Project: p.Project}
	switch j.Event {
	case apply.EventReport:
		sub.Applies = true // the report of an apply that ran
	case "pull_request":
		sub.Applies = p.Action == "closed" && p.PullRequest != nil && p.PullRequest.Merged
	case "issue_comment":
		if p.Comment != nil {
			cmds, _ := prcommand.Parse(p.Comment.Body)
			for _, c := range cmds {
				sub.Applies = sub.Applies || c.Verb == prcommand.CmdApply
			}
		}
	}
	return sub
}
