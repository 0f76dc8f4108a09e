package bot

import (
	"context"

	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/livestate"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

// driftLive gives drift checks the live state the plan flow reads, through the
// same coordinator clients (configured URL prefixes and credentials only).
type driftLive struct{ c *livestate.Coordinators }

var _ drift.LiveReader = driftLive{}

// LiveState implements drift.LiveReader.
func (l driftLive) LiveState(ctx context.Context, cs *planparse.ChangeSet) (policy.Coordinator, map[string]policy.LiveStream) {
	return l.c.Read(ctx, cs)
}
