package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/sirupsen/logrus"

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
// the parts it needs.
type Base struct {
	cfg     *serverconfig.Config
	clients ghapp.ClientCreator
	rec     records.Store
	// prLocks: one job of a pull request at a time (the planner's too).
	prLocks   *keyedmutex.Mutex
	planner   *Planner
	applier   *Applier
	applies   *applyqueue.Queue
	scheduler *applyqueue.Scheduler
	drift     *driftChecks
	now       func() time.Time
}

// base is what the server's handlers are given.
func (s *Server) base() *Base {
	return &Base{cfg: s.cfg, clients: s.clients, rec: s.rec, prLocks: &s.prLocks, planner: s.planner, applier: s.applier,
		applies: s.applies, scheduler: s.scheduler, drift: s.drift, now: s.now}
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
