package plan

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store/records"
)

// prPlans are the pull-request plans of this process, running or waiting
// for their pull request's lock, by pull request, so `/shardgate cancel`
// stops them: their context ends with a *webhook.CancelledError, terraform
// gets SIGINT (it gives up waiting for a state lock and releases any it
// holds) and is killed after the runner's grace period if it has not ended.
type prPlans struct {
	mu   sync.Mutex
	next int
	runs map[string]map[int]context.CancelCauseFunc
}

// add registers a plan of the pull request key; the returned context ends
// when it is cancelled, and done forgets it.
func (p *prPlans) add(ctx context.Context, key string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runs == nil {
		p.runs = map[string]map[int]context.CancelCauseFunc{}
	}
	if p.runs[key] == nil {
		p.runs[key] = map[int]context.CancelCauseFunc{}
	}
	p.next++
	id := p.next
	p.runs[key][id] = cancel
	return ctx, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.runs[key], id)
		if len(p.runs[key]) == 0 {
			delete(p.runs, key)
		}
		cancel(nil)
	}
}

// cancel stops the plans of the pull request key, and says how many.
func (p *prPlans) cancel(key, by string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cancel := range p.runs[key] {
		cancel(&webhook.CancelledError{By: by})
	}
	return len(p.runs[key])
}

// CancelPlans cancels the pull request's plans (`/shardgate cancel` by
// by): those running or waiting in this process stop now, and those queued
// before ctx's job will not run (PlanPR reads the record when their turn
// comes, on whichever replica). It says how many it stopped here. Applies
// are not plans: nothing of theirs is touched.
func (s *Planner) CancelPlans(ctx context.Context, ref pullreq.Ref, by string) (int, error) {
	c := records.PlanCancel{By: by, JobID: webhook.JobID(ctx), At: s.Now()}
	if err := s.Records.PutPlanCancel(ctx, ref, c); err != nil {
		return 0, fmt.Errorf("record the cancel of %s's plans: %w", ref, err)
	}
	return s.prPlans.cancel(ref.Key(), by), nil
}

// cancellable runs plan unless a cancel came after ctx's job was queued,
// and reports a plan cancelled before or while it ran: a cancelled plan is
// a finished job, not a failure.
func (s *Planner) cancellable(ctx context.Context, ref pullreq.Ref, plan func(context.Context) error) error {
	if c := webhook.Cancelled(ctx); c != nil {
		return s.finishCancelled(context.WithoutCancel(ctx), ref, c.By)
	}
	c, err := s.Records.PlanCancel(ctx, ref)
	if err != nil {
		return err
	}
	if c.Covers(webhook.JobID(ctx)) {
		logctx.Logger(ctx).WithField("cancelled_by", c.By).Info("plan job cancelled before it ran")
		return s.finishCancelled(ctx, ref, c.By)
	}
	err = plan(ctx)
	if c := webhook.Cancelled(ctx); c != nil {
		logctx.Logger(ctx).WithError(err).WithField("cancelled_by", c.By).Info("plan cancelled")
		return s.finishCancelled(context.WithoutCancel(ctx), ref, c.By)
	}
	return err
}

// finishCancelled completes the plan and aggregate check runs the pull
// request's plans left in progress as cancelled, and says on its comment
// who cancelled.
func (s *Planner) finishCancelled(ctx context.Context, ref pullreq.Ref, by string) error {
	gh, err := ghapp.APIFor(s.Clients, ref.Installation)
	if err != nil {
		return err
	}
	open, _, err := s.Checks.ListOpen(ctx, &ref)
	if err != nil {
		return err
	}
	out := &ghapp.CheckOutput{Title: "Cancelled by " + by,
		Summary: by + " cancelled this pull request's plan before it finished. Comment `/shardgate plan` to plan it again."}
	for _, oc := range open {
		if !strings.HasPrefix(oc.Name, prreport.CheckPlanPrefix) && oc.Name != prreport.CheckGateName {
			continue
		}
		id := oc.ID
		if id == 0 {
			if id, err = s.Checks.Find(ctx, gh, ref, oc.Name, oc.SHA, true); err != nil {
				return err
			}
		}
		if id == 0 {
			if err := s.Checks.Forget(ctx, oc.Key); err != nil {
				return err
			}
			continue
		}
		if _, err := s.Checks.Finish(ctx, gh, ref, id, oc.Name, oc.SHA, "cancelled", out); err != nil {
			return err
		}
	}
	st, err := s.Records.PR(ctx, ref)
	if err != nil || st == nil {
		return err
	}
	plans, err := s.Records.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		return err
	}
	st.Status = fmt.Sprintf("cancelled by %s: the plan of `%s` was stopped. Comment `/shardgate plan` to plan it again.", by, pullreq.ShortSHA(st.HeadSHA))
	return s.Publish(ctx, gh, st, records.OrderPlans(plans, st.Projects))
}
