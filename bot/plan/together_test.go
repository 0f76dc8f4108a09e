package plan

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/store/records"
)

// A plan that changes a stream is judged with the counts other repositories
// ask of it, as their last drift check recorded them, addressed so the
// finding says so; its own repository's records and other streams are left
// out, and a store that cannot be read fails the job.
func TestJudgedTogetherWithOtherRepositories(t *testing.T) {
	const coord = "http://coordinator:8080"
	key := planparse.StreamKey(coord, "orders")
	four, six := 4, 6
	rec := &records.Plan{Project: "streams", ChangeSet: &planparse.ChangeSet{
		Changes: []planparse.Change{{Address: "module.billing", StreamPrefix: "orders", ConsumerGroup: "billing", Coordinator: coord,
			Stream: key, Action: planparse.ActionScale, ShardsBefore: &four, ShardsAfter: &six}},
		Desired: []planparse.Desired{{Address: "module.billing", StreamPrefix: "orders", ConsumerGroup: "billing", Coordinator: coord, Stream: key, ShardCount: 6}},
	}}
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	declared := []Declared{
		{Repo: "acme/ledger", Project: "core", Source: "last drift check", At: at, Desired: []planparse.Desired{
			{Address: "module.audit", StreamPrefix: "orders", ConsumerGroup: "audit", Coordinator: coord, Stream: key, ShardCount: 4},
			{Address: "module.other", StreamPrefix: "payments", ConsumerGroup: "x", Coordinator: coord, Stream: planparse.StreamKey(coord, "payments"), ShardCount: 9},
		}},
		{Repo: seamRef.FullName(), Project: "streams", Source: "last drift check", At: at, Desired: []planparse.Desired{
			{Address: "module.billing", StreamPrefix: "orders", ConsumerGroup: "billing", Coordinator: coord, Stream: key, ShardCount: 4},
		}},
	}
	s := &Planner{Declared: func(context.Context) ([]Declared, error) { return declared, nil }}
	changed, err := s.judgeTogether(context.Background(), seamRef, "sha", "", &repoconfig.Config{}, []*records.Plan{rec})
	require.NoError(t, err)
	require.Equal(t, []*records.Plan{rec}, changed)
	require.Len(t, rec.Peers, 1, "only the other repository's count of the stream the plan changes")
	require.Equal(t, "acme/ledger project core, as its last drift check of 2026-12-01 09:30 UTC recorded: module.audit", rec.Peers[0].Address)
	require.Equal(t, 4, rec.Peers[0].ShardCount)

	engine, err := policy.New()
	require.NoError(t, err)
	dec, err := engine.Evaluate(context.Background(), policy.Request{ChangeSet: rec.ChangeSet, Peers: rec.Peers,
		Attestations: []policy.Attestation{{StreamPrefix: "orders", Actor: "ops", ExpiresAt: at.Add(time.Hour)}}, Now: at})
	require.NoError(t, err)
	require.False(t, dec.Allowed)
	require.Contains(t, dec.Violations[0].Message, "acme/ledger project core, as its last drift check")

	again, err := s.judgeTogether(context.Background(), seamRef, "sha", "", &repoconfig.Config{}, []*records.Plan{rec})
	require.NoError(t, err)
	require.Empty(t, again, "the same peers: nothing to judge again")

	s.Declared = func(context.Context) ([]Declared, error) { return nil, errors.New("store down") }
	_, err = s.judgeTogether(context.Background(), seamRef, "sha", "", &repoconfig.Config{}, []*records.Plan{rec})
	require.ErrorContains(t, err, "store down")
}

// The projects planned only for the comparison are terraform runs like the
// job's own: each waits for one of the server's plan slots, so a job that
// judges together never runs more than queue.workers terraforms at once.
// With the one slot held, the comparison runs nothing and ends with the job.
func TestJudgedTogetherPlansItsPeersInThePlanSlots(t *testing.T) {
	const coord = "http://coordinator:8080"
	key := planparse.StreamKey(coord, "orders")
	four, six := 4, 6
	rec := &records.Plan{Project: "streams", ChangeSet: &planparse.ChangeSet{
		Changes: []planparse.Change{{Address: "module.billing", StreamPrefix: "orders", ConsumerGroup: "billing", Coordinator: coord,
			Stream: key, Action: planparse.ActionScale, ShardsBefore: &four, ShardsAfter: &six}},
	}}
	s := &Planner{Config: &serverconfig.Config{Workers: 1}} // no Runner: a run outside the slots would panic
	release, err := s.slots.acquire(context.Background(), 1)
	require.NoError(t, err)
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the job ends while every slot is taken
	cfg := &repoconfig.Config{Projects: []repoconfig.Project{{Name: "streams", Dir: "streams"}, {Name: "audit", Dir: "audit"}}}
	_, err = s.judgeTogether(ctx, seamRef, "sha", "", cfg, []*records.Plan{rec})
	require.ErrorIs(t, err, context.Canceled)
}
