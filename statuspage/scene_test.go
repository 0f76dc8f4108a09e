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

	"github.com/shardgate/shardgate/applyqueue"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/livelog"
	"github.com/shardgate/shardgate/records"
	"github.com/shardgate/shardgate/store"
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
