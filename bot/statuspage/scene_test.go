package statuspage

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/livelog"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/store/storetest"
)

// backends are the stores the page is tested on.
var backends = []string{"bolt", "postgres"}

func openStore(t *testing.T, backend string) store.Store {
	t.Helper()
	var st store.Store
	var err error
	switch backend {
	case "bolt":
		st, err = store.OpenBolt(filepath.Join(t.TempDir(), "store.db"), store.WithoutSync())
	case "postgres":
		st, err = store.OpenPostgres(context.Background(), storetest.PostgresURL(t))
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// scene is a status page over a real store, apply queue, records and live
// logs, on a clock standing still.
type scene struct {
	clock *fakeclock.Clock
	st    store.Store
	queue *applyqueue.Queue
	rec   records.Store
	logs  *livelog.Hub
	page  *Handler
	srv   *httptest.Server
}

// pageTime is how the page writes a time (spelt out here, so that a test
// fails when the page writes it otherwise).
func pageTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }

func newScene(t *testing.T, backend string, o Options) *scene {
	t.Helper()
	s := &scene{clock: fakeclock.New(time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)), st: openStore(t, backend)}
	s.queue = applyqueue.New(s.st, "replica-a", 10*time.Minute, s.clock.Now)
	s.rec = records.New(s.st, o.Redactor)
	s.logs = livelog.NewHub(0, 0, o.Redactor, s.clock.Now)
	logger, _ := test.NewNullLogger()
	o.Queue, o.History, o.Logs, o.Now, o.Replica = s.queue, s.rec, s.logs, s.clock.Now, "replica-a"
	if o.GitHubURL == "" {
		o.GitHubURL = "https://github.com"
	}
	o.Log = logrus.NewEntry(logger)
	s.page = New(o)
	s.srv = httptest.NewServer(s.page)
	t.Cleanup(s.srv.Close)
	return s
}

// enqueue adds an apply job of one pull request and project on streams.
func (s *scene) enqueue(t *testing.T, ref int, project string, streams ...string) *applyqueue.Job {
	t.Helper()
	j := &applyqueue.Job{Ref: refOf(ref), Project: project, Streams: streams, MergeSHA: "0123456789abcdef0123456789abcdef01234567"}
	require.NoError(t, s.queue.Enqueue(context.Background(), j))
	return j
}

// start acquires a job and starts its live log, as the bot's applier does.
func (s *scene) start(t *testing.T, j *applyqueue.Job) *livelog.Log {
	t.Helper()
	held, err := s.queue.Acquire(context.Background(), j.Seq)
	require.NoError(t, err)
	require.NoError(t, s.queue.Update(context.Background(), j.Seq, func(x *applyqueue.Job) error {
		x.State = applyqueue.Applying
		return nil
	}))
	return s.logs.Start(livelog.Info{ID: ApplyLogID(held.Seq, held.Attempt), Kind: livelog.KindApply, Ref: held.Ref,
		Project: held.Project, SHA: held.MergeSHA, Seq: held.Seq})
}

// history adds a denied plan, a plan that waited on a state lock and a
// finished apply with its coordinator request ids.
func (s *scene) history(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	at := s.clock.Now().Add(-20 * time.Minute)
	require.NoError(t, s.rec.PutPlan(ctx, refOf(12), &records.Plan{Project: "orders-west", HeadSHA: "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
		PlannedAt: at, ChangeSet: &planparse.ChangeSet{}, Decision: policy.Decision{Violations: []policy.Violation{{Rule: "shard_delta",
			StreamPrefix: "create-order", ConsumerGroup: "billing", Message: "scales create-order from 4 to 16 shards (max delta 4)"}}}}))
	require.NoError(t, s.rec.PutPlan(ctx, refOf(11), &records.Plan{Project: "orders-east", HeadSHA: "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",
		PlannedAt: at.Add(5 * time.Minute), ChangeSet: &planparse.ChangeSet{}, Decision: policy.Decision{Allowed: true},
		LockWaits: []report.LockWait{{ID: "6f1c2d3e", Who: "alice@ops-laptop", Operation: "OperationTypeApply", WaitedSeconds: 42}}}))
	require.NoError(t, records.PutJSON(ctx, s.st, records.BucketAudit, records.AuditKey("000000000000", 1), records.Audit{Seq: "000000000000",
		Ref: refOf(9), Project: "payments", Outcome: string(applyqueue.Applied), MergeSHA: "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c", MergedBy: "bob",
		RequestIDPrefix: "sg-acme-streams-9-", RequestIDs: []string{"sg-acme-streams-9-scale-1", "sg-acme-streams-9-scale-2"},
		FinishedAt: at.Add(-time.Hour)}))
}
