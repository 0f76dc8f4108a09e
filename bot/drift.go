package bot

import (
	"context"

	"github.com/shardgate/shardgate/drift"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

// driftLive gives drift checks the live state the plan flow reads, through the
// same coordinator clients (configured URL prefixes and credentials only).
type driftLive struct{ c *coordinators }

var _ drift.LiveReader = driftLive{}

// LiveState implements drift.LiveReader.
func (l driftLive) LiveState(ctx context.Context, cs *planparse.ChangeSet) (policy.Coordinator, map[string]policy.LiveStream) {
	return l.c.liveState(ctx, cs)
}

// wireDrift builds the drift checker and its schedule (off unless
// drift.interval is set); the health check's pause stops scheduled passes.
func (s *Server) wireDrift() {
	s.drift = &driftChecker{cfg: s.cfg, clients: s.clients, planner: s.planner, runner: s.runner, sandboxErr: s.sandboxErr,
		live: driftLive{s.coords}, store: drift.NewStore(s.store), metrics: s.metrics, redact: s.redact, now: s.now}
	s.driftSched = &drift.Scheduler{Store: s.drift.store, Interval: s.cfg.DriftInterval, Now: s.now, Log: s.log,
		Check: func(ctx context.Context, r drift.Repo) error {
			_, err := s.drift.checkRepo(ctx, r)
			return err
		}}
}
