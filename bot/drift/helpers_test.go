package drift

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storetest"
)

func ip(n int) *int { return &n }

const coordURL = "http://coord:8080"

// module is a stream-group module instance as planparse gives it.
func module(addr, prefix, group string, action planparse.Action, before, after *int) planparse.Change {
	return planparse.Change{Address: addr, Kind: planparse.KindModule, StreamPrefix: prefix, ConsumerGroup: group,
		CoordinatorURL: coordURL, Coordinator: coordURL, Stream: planparse.StreamKey(coordURL, prefix), Action: action,
		ShardsBefore: before, ShardsAfter: after, PriorShards: before, TerraformActions: []string{"no-op"}}
}

// liveOf is the live state of one stream with groups at counts.
func liveOf(prefix string, counts map[string]int) map[string]policy.LiveStream {
	ls := policy.LiveStream{Coordinator: coordURL, StreamPrefix: prefix}
	for g, n := range counts {
		ls.Groups = append(ls.Groups, policy.LiveGroup{ConsumerGroup: g, ShardCount: n, State: "STABLE", LiveMembers: 2})
	}
	return map[string]policy.LiveStream{planparse.StreamKey(coordURL, prefix): ls}
}

var reached = policy.Coordinator{Consulted: true, Reachable: true}

// stores are the two backends a drift Store runs on: bbolt always, and
// PostgreSQL when SHARDGATE_TEST_POSTGRES_URL is set.
func stores(t *testing.T) map[string]store.Store {
	t.Helper()
	out := map[string]store.Store{}
	b, err := store.OpenBolt(filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	out["bolt"] = b
	if _, ok := storetest.BaseURL(); ok {
		p, err := store.OpenPostgres(context.Background(), storetest.PostgresURL(t))
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		out["postgres"] = p
	}
	return out
}

// clockStart is where every test clock starts; t0 is where it then stands,
// moved by SHARDGATE_FAKECLOCK_SHIFT.
var (
	clockStart = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	t0         = fakeclock.Shift(clockStart)
)

func newClock() *fakeclock.Clock { return fakeclock.New(clockStart) }
