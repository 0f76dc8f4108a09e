package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
)

// prPayload is what a webhook payload says of the pull request it is
// about: jobPR's and identify's shared reading.
type prPayload struct {
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Repository struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
	PullRequest *struct {
		Number int `json:"number"`
	} `json:"pull_request"`
	Issue *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
}

// ref is the pull request of a payload that names one, with its
// installation: a pull_request payload's, or an issue's that is a pull
// request.
func (p *prPayload) ref() (pullreq.Ref, bool) { return p.refNumbered(p.number()) }

// number is the pull request's number, 0 when the payload names none.
func (p *prPayload) number() int {
	switch {
	case p.PullRequest != nil && p.PullRequest.Number > 0:
		return p.PullRequest.Number
	case p.Issue != nil && p.Issue.Number > 0 && len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null":
		return p.Issue.Number
	}
	return 0
}

// refNumbered is the payload's repository's pull request number n; false
// without an installation, a repository or a number.
func (p *prPayload) refNumbered(n int) (pullreq.Ref, bool) {
	if p.Installation.ID == 0 || p.Repository.Name == "" || n <= 0 {
		return pullreq.Ref{}, false
	}
	return pullreq.Ref{Installation: p.Installation.ID, Owner: p.Repository.Owner.Login, Repo: p.Repository.Name, Number: n}, true
}

// jobPR is the pull request a webhook job is about, read from its payload.
func jobPR(payload []byte) (pullreq.Ref, bool) {
	var p prPayload
	if json.Unmarshal(payload, &p) != nil {
		return pullreq.Ref{}, false
	}
	return p.ref()
}

// reportJobFailure says on the pull request that a job failed for good (after
// its retries, or on an error retrying cannot fix) and finishes the plan check
// runs it left in progress, so nothing is silently lost. It reports through
// GitHub, which may be what failed: then it can only log.
func (s *Server) reportJobFailure(ctx context.Context, job *store.Job, jobErr error) {
	s.notifyJobFailed(ctx, job, jobErr)
	if job.Event == "merge_group" {
		s.reportGroupFailure(ctx, job, jobErr)
		return
	}
	ref, ok := jobPR(job.Payload)
	if !ok {
		return
	}
	unlock := s.prLocks.Lock(ref.Key())
	defer unlock()
	if err := s.reportJobFailureLocked(ctx, ref, job, jobErr); err != nil {
		logctx.Logger(ctx).WithError(err).Error("report a failed job on its pull request")
	}
}

func (s *Server) reportJobFailureLocked(ctx context.Context, ref pullreq.Ref, job *store.Job, jobErr error) error {
	gh, err := ghapp.APIFor(s.clients, ref.Installation)
	if err != nil {
		return err
	}
	st, err := s.rec.PR(ctx, ref)
	if err != nil {
		return err
	}
	if st == nil {
		st = &records.PRState{Ref: ref}
	}
	reason := inertCode(jobErr.Error())
	tries := "once"
	if job.Attempts > 1 {
		tries = fmt.Sprintf("%d times", job.Attempts)
	}
	st.Status = fmt.Sprintf("⚠️ shardgate could not finish handling a `%s` event (tried %s): %s — comment `/shardgate plan` to try again.",
		job.Event, tries, reason)
	plans, err := s.rec.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		return err
	}
	for _, p := range plans {
		if p.CheckRunID == 0 || p.ChangeSet != nil || p.Error != "" {
			continue
		}
		p.Error = "not finished: " + report.FirstLine(jobErr.Error())
		title, summary := "shardgate could not finish this plan", "shardgate could not finish this plan: "+reason+
			"\n\nComment `/shardgate plan` on the pull request to try again."
		out := &ghapp.CheckOutput{Title: title, Summary: summary}
		if _, err := s.checks.Finish(ctx, gh, ref, p.CheckRunID, prreport.CheckPlanPrefix+p.Project, p.HeadSHA, "failure", out); err != nil {
			return err
		}
		if err := s.rec.PutPlan(ctx, ref, p); err != nil {
			return err
		}
	}
	if err := s.finishJobChecks(ctx, gh, ref, job.ID, reason); err != nil {
		return err
	}
	return s.planner.Publish(ctx, gh, st, plans)
}

// finishJobChecks completes the plan check runs the failed job left open (a
// project's check run is started before its plan is stored).
func (s *Server) finishJobChecks(ctx context.Context, gh ghapp.API, ref pullreq.Ref, jobID, reason string) error {
	open, _, err := s.checks.ListOpen(ctx, &ref)
	if err != nil {
		return err
	}
	for _, oc := range open {
		if !strings.HasPrefix(oc.Name, prreport.CheckPlanPrefix) && oc.Name != prreport.CheckGateName || oc.Job != jobID && oc.Job != "" {
			continue
		}
		title, summary := "shardgate could not finish this plan", "shardgate could not finish this plan: "+reason+
			"\n\nComment `/shardgate plan` on the pull request to try again."
		if _, err := s.finishOpen(ctx, oc, "failure", &ghapp.CheckOutput{Title: title, Summary: summary}); err != nil {
			return err
		}
	}
	return nil
}

// inertCode shows error text as one inline code span that nothing in it can
// close: errors can quote what a pull request wrote.
func inertCode(s string) string {
	return "`" + strings.ReplaceAll(report.FirstLine(s), "`", "'") + "`"
}
