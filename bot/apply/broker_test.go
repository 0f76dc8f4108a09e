package apply

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/planparse"
)

func TestBrokerChangesAreTheCallsTerraformMakes(t *testing.T) {
	n := func(i int) *int { return &i }
	const c = "http://coord:8080"
	judged := []planparse.Change{
		{Coordinator: c, StreamPrefix: "orders", ConsumerGroup: "billing", Action: planparse.ActionScale, ShardsBefore: n(4), ShardsAfter: n(6)},
		{Coordinator: c, StreamPrefix: "orders", ConsumerGroup: "audit", Action: planparse.ActionNoop, ShardsBefore: n(4), ShardsAfter: n(4)},
		{Coordinator: c, StreamPrefix: "clicks", ConsumerGroup: "etl", Action: planparse.ActionCreate, ShardsAfter: n(3)},
		{Coordinator: c, StreamPrefix: "old", ConsumerGroup: "gone", Action: planparse.ActionDelete, ShardsBefore: n(2)},
		{Coordinator: c, StreamPrefix: "moved", ConsumerGroup: "g", Action: planparse.ActionMove, ShardsAfter: n(9)},
		{Coordinator: c, StreamPrefix: "forgotten", ConsumerGroup: "g", Action: planparse.ActionUnmanage, ShardsBefore: n(9)},
	}
	require.Equal(t, []coordbroker.Change{
		{Coordinator: c, StreamPrefix: "orders", ConsumerGroup: "billing", Action: coordbroker.Scale, Shards: 6},
		{Coordinator: c, StreamPrefix: "clicks", ConsumerGroup: "etl", Action: coordbroker.Create, Shards: 3},
		{Coordinator: c, StreamPrefix: "old", ConsumerGroup: "gone", Action: coordbroker.Delete},
	}, brokerChanges(judged))
}
