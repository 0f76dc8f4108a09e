package policy

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

const (
	coordA = "http://coordinator-a:8080"
	coordB = "http://coordinator-b:8080"
)

// onCoordinator is c as planparse writes it for a module on that coordinator.
func onCoordinator(c planparse.Change, coordinator string) planparse.Change {
	c.CoordinatorURL, c.Coordinator = coordinator, coordinator
	c.Stream = planparse.StreamKey(coordinator, c.StreamPrefix)
	return c
}

// tainted is a retry of a failed apply, as planparse writes it: the prior count
// is reported but not trusted, so ShardsBefore is nil.
func tainted(prefix, group string, prior, after int) planparse.Change {
	c := moduleChange(prefix, group, planparse.ActionScale, nil, intp(after))
	c.Tainted, c.PriorShards = true, intp(prior)
	c.ActionReason, c.TerraformActions = "replace_because_tainted", []string{"delete", "create"}
	return c
}

func liveOn(coordinator, prefix string, groups ...LiveGroup) map[string]LiveStream {
	return map[string]LiveStream{planparse.StreamKey(coordinator, prefix): {Coordinator: coordinator, StreamPrefix: prefix, Groups: groups}}
}

func TestJudgeEffect(t *testing.T) {
	create := moduleChange("orders", "billing", planparse.ActionCreate, nil, intp(4))
	tests := []struct {
		name       string
		change     planparse.Change
		live       map[string]LiveStream
		wantAction planparse.Action
		wantBefore *int
		wantDrift  bool
	}{
		{name: "create offline stays a create", change: create, wantAction: planparse.ActionCreate},
		{
			name: "create of a group the coordinator has at another count is a scale", change: create,
			live: liveStream("orders", liveGroup("billing", 2)), wantAction: planparse.ActionScale, wantBefore: intp(2),
		},
		{
			name: "create of a group the coordinator has at the desired count is an update", change: create,
			live: liveStream("orders", liveGroup("billing", 4)), wantAction: planparse.ActionUpdate, wantBefore: intp(4),
		},
		{
			name: "create of a new group in a stream with other groups stays a create", change: create,
			live: liveStream("orders", liveGroup("audit", 8)), wantAction: planparse.ActionCreate,
		},
		{
			name: "tainted retry offline is a scale from an unknown count", change: tainted("orders", "billing", 5, 5),
			wantAction: planparse.ActionScale,
		},
		{
			name: "tainted retry is a scale from the live count", change: tainted("orders", "billing", 5, 5),
			live: liveStream("orders", liveGroup("billing", 4)), wantAction: planparse.ActionScale, wantBefore: intp(4),
		},
		{
			name: "tainted retry the coordinator already finished is an update", change: tainted("orders", "billing", 4, 5),
			live: liveStream("orders", liveGroup("billing", 5)), wantAction: planparse.ActionUpdate, wantBefore: intp(5),
		},
		{
			name: "tainted prior count is never trusted", wantAction: planparse.ActionScale,
			change: func() planparse.Change { c := tainted("orders", "billing", 5, 5); c.ShardsBefore = intp(5); return c }(),
		},
		{
			name:   "update after a live drift is a scale",
			change: moduleChange("orders", "billing", planparse.ActionUpdate, intp(4), intp(4)),
			live:   liveStream("orders", liveGroup("billing", 2)), wantAction: planparse.ActionScale, wantBefore: intp(2),
		},
		{
			name:   "update offline stays an update",
			change: moduleChange("orders", "billing", planparse.ActionUpdate, intp(4), intp(4)), wantAction: planparse.ActionUpdate, wantBefore: intp(4),
		},
		{
			name:   "update from an unknown count may scale",
			change: moduleChange("orders", "billing", planparse.ActionUpdate, nil, intp(4)), wantAction: planparse.ActionScale,
		},
		{
			name:   "update with an unknown desired count is left to the rules",
			change: moduleChange("orders", "billing", planparse.ActionUpdate, intp(4), nil),
			live:   liveStream("orders", liveGroup("billing", 2)), wantAction: planparse.ActionUpdate, wantBefore: intp(2),
		},
		{
			name: "scale the coordinator already has is an update", change: scaleChange("orders", "billing", 4, 8),
			live: liveStream("orders", liveGroup("billing", 8)), wantAction: planparse.ActionUpdate, wantBefore: intp(8),
		},
		{
			name: "scale from the live count", change: scaleChange("orders", "billing", 4, 8),
			live: liveStream("orders", liveGroup("billing", 6)), wantAction: planparse.ActionScale, wantBefore: intp(6),
		},
		{
			name: "scale of a group the coordinator lacks keeps the plan's count", change: scaleChange("orders", "billing", 4, 8),
			live: liveStream("orders", liveGroup("audit", 6)), wantAction: planparse.ActionScale, wantBefore: intp(4),
		},
		{
			name:   "noop away from the live count is drift",
			change: moduleChange("orders", "billing", planparse.ActionNoop, intp(4), intp(4)),
			live:   liveStream("orders", liveGroup("billing", 6)), wantAction: planparse.ActionNoop, wantBefore: intp(6), wantDrift: true,
		},
		{
			name:   "noop at the live count is no drift",
			change: moduleChange("orders", "billing", planparse.ActionNoop, intp(4), intp(4)),
			live:   liveStream("orders", liveGroup("billing", 4)), wantAction: planparse.ActionNoop, wantBefore: intp(4),
		},
		{
			// The new address's apply runs apply.sh, which scales the stream when
			// the live count differs: the move is the scale it causes.
			name: "move away from the live count is a scale",
			change: func() planparse.Change {
				c := moduleChange("orders", "billing", planparse.ActionMove, intp(4), intp(4))
				c.MovedFrom = "module.old.terraform_data.stream_group"
				return c
			}(),
			live: liveStream("orders", liveGroup("billing", 6)), wantAction: planparse.ActionScale, wantBefore: intp(6),
		},
		{
			name:   "delete keeps its action, from the live count",
			change: moduleChange("orders", "billing", planparse.ActionDelete, intp(4), nil),
			live:   liveStream("orders", liveGroup("billing", 6)), wantAction: planparse.ActionDelete, wantBefore: intp(6),
		},
		{
			name:   "the same prefix on another coordinator is another stream",
			change: onCoordinator(scaleChange("orders", "billing", 4, 8), coordB),
			live:   liveOn(coordA, "orders", liveGroup("billing", 8)), wantAction: planparse.ActionScale, wantBefore: intp(4),
		},
		{
			name:   "live state of the change's own coordinator counts",
			change: onCoordinator(scaleChange("orders", "billing", 4, 8), coordA),
			live:   liveOn(coordA, "orders", liveGroup("billing", 8)), wantAction: planparse.ActionUpdate, wantBefore: intp(8),
		},
		{
			name: "a change without a stream key is keyed by its coordinator and prefix",
			change: func() planparse.Change {
				c := onCoordinator(scaleChange("orders", "billing", 4, 8), coordA)
				c.Stream = ""
				return c
			}(),
			live: liveOn(coordA, "orders", liveGroup("billing", 6)), wantAction: planparse.ActionScale, wantBefore: intp(6),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := tt.change
			req := Request{ChangeSet: changeSet(tt.change), Live: tt.live}
			j := judge(req)
			require.Len(t, j.changes, 1)
			got := j.changes[0]
			require.Equal(t, tt.wantAction, got.Action)
			require.Equal(t, tt.wantBefore, got.ShardsBefore)
			require.Equal(t, streamOf(&orig), got.Stream, "the stream key is always set")
			require.Equal(t, tt.change.ShardsAfter, got.ShardsAfter)
			if tt.wantDrift {
				require.Equal(t, []int{0}, j.drift)
			} else {
				require.Empty(t, j.drift)
			}
			require.Equal(t, orig, req.ChangeSet.Changes[0], "the request is not modified")
		})
	}
}
