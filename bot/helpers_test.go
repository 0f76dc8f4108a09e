package bot

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/webhook"
)

const testSecret = "webhook-secret"

func openStore(t testing.TB) *store.Bolt {
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// withHandler puts h in the place of the server's handlers of the events h
// names.
func withHandler(h webhook.EventHandler) Option {
	return func(s *Server) { s.replaced = append(s.replaced, h) }
}

// openPostgresAt opens one more replica's store on url.
func openPostgresAt(t testing.TB, url string, lease time.Duration) *store.Postgres {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.OpenPostgres(ctx, url, store.WithLease(lease))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// enqueue queues a pull_request delivery per id and returns the job ids.
func enqueue(t *testing.T, st store.Store, ids ...string) []string {
	var jobIDs []string
	for _, id := range ids {
		j := &store.Job{DeliveryID: id, Kind: webhook.JobKindEvent, Event: "pull_request", Payload: []byte(`{}`)}
		require.NoError(t, st.Enqueue(context.Background(), j, 0))
		jobIDs = append(jobIDs, j.ID)
	}
	return jobIDs
}
