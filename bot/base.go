package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/apply"
	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/keyedmutex"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// Base is what the event handlers share: the services they call, named, and
// payload decoding. The Server builds it (handlers); a test builds one from
// the parts it needs. The flows (plan, apply, drift) are reached through what
// the handlers call of them, nothing more; the comment, the check runs and
// the approvers are services of their own, not reached through a flow.
type Base struct {
	cfg     *serverconfig.Config
	clients ghapp.ClientCreator
	rec     records.Store
	// prLocks: one job of a pull request at a time (the planner's too).
	prLocks *keyedmutex.Mutex
	planner planFlow
	applier applyFlow
	drift   driftFlow
	// driftRecords are the drift checks' results, per repository.
	driftRecords drift.Store
	comments     *prreport.Comments
	checks       *prreport.Checks
	approvers    *approval.Approvers
	applies      *applyqueue.Queue
	scheduler    *applyqueue.Scheduler
	now          func() time.Time
}

// planFlow is what the handlers start of the plan flow (the Planner).
type planFlow interface {
	PlanPR(ctx context.Context, req plan.Request) error
	Reevaluate(ctx context.Context, ref pullreq.Ref) error
	RefreshComment(ctx context.Context, gh ghapp.API, ref pullreq.Ref, final *applyqueue.Job) error
	Publish(ctx context.Context, gh ghapp.API, st *records.PRState, plans []*records.Plan) error
	HeadWhen(ctx context.Context, gh ghapp.API, ref pullreq.Ref, t time.Time) (head, current string, err error)
	PlanGroup(ctx context.Context, g plan.Group) error
	DestroyGroup(ctx context.Context, g plan.Group, reason string) error
	CancelPlans(ctx context.Context, ref pullreq.Ref, by string) (int, error)
}

// applyFlow is what the handlers start of the apply flow (the Applier).
type applyFlow interface {
	EnqueueApplies(ctx context.Context, gh ghapp.API, st *records.PRState, pr ghapp.PullRequest) error
	EnqueueApply(ctx context.Context, ref pullreq.Ref, p *records.Plan, pr ghapp.PullRequest, requestedBy string) (bool, error)
}

// driftFlow is what the handlers start of the drift checks.
type driftFlow interface {
	sawRepo(ctx context.Context, inst *github.Installation, repo *github.Repository)
	forget(ctx context.Context, inst *github.Installation, action string, removed []*github.Repository) error
	CheckRepo(ctx context.Context, r drift.Repo) ([]*drift.Record, error)
}

var (
	_ planFlow  = (*plan.Planner)(nil)
	_ applyFlow = (*apply.Applier)(nil)
	_ driftFlow = (*driftChecks)(nil)
)

// base is what the server's handlers are given.
func (s *Server) base() *Base {
	b := &Base{cfg: s.cfg, clients: s.clients, rec: s.rec, prLocks: &s.prLocks, planner: s.planner, applier: s.applier,
		drift: s.drift, comments: s.comments, checks: s.checks, approvers: s.approvers, applies: s.applies,
		scheduler: s.scheduler, now: s.now}
	// A Server that is not wired (a test listing the handlers) has no flows.
	if s.drift != nil {
		b.driftRecords = s.drift.store
	}
	return b
}

// parse decodes a webhook payload into go-github's type for the event; unknown
// fields are ignored, so newer GitHub payloads still decode.
func parse[T any](eventType string, payload []byte) (T, error) {
	var zero T
	ev, err := github.ParseWebHook(eventType, payload)
	if err != nil {
		return zero, fmt.Errorf("decode %s event: %w", eventType, err)
	}
	t, ok := ev.(T)
	if !ok {
		return zero, fmt.Errorf("decode %s event: unexpected type %T", eventType, ev)
	}
	return t, nil
}

// prRef names the pull request of an event from its repository and number.
func prRef(inst *github.Installation, repo *github.Repository, number int) (pullreq.Ref, error) {
	if inst.GetID() == 0 {
		return pullreq.Ref{}, errNoInstallation
	}
	return pullreq.Ref{Installation: inst.GetID(), Owner: repo.GetOwner().GetLogin(), Repo: repo.GetName(), Number: number}, nil
}

// withPR enriches the context's logger with the pull request.
func withPR(ctx context.Context, ref pullreq.Ref) context.Context {
	return logctx.WithLogger(ctx, logctx.Logger(ctx).WithFields(logrus.Fields{logctx.FieldInstallation: ref.Installation, logctx.FieldRepo: ref.FullName(), logctx.FieldPR: ref.Number}))
}
