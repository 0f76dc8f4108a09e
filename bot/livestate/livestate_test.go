package livestate

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/store"
)

func quietLog() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

// world is a configured coordinator (the simulator, calls counted) holding
// create-order at 4 shards, and Coordinators over a bbolt store.
func world(t *testing.T) (*Coordinators, string, *atomic.Int32) {
	t.Helper()
	sim := coordsim.New()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	cfg := &serverconfig.Config{Coordinators: []serverconfig.CoordinatorCredentials{{URLPrefix: srv.URL, Username: "admin", Password: serverconfig.NewSecret("password")}}}
	c := New(cfg, st, quietLog(), nil, nil)
	url := planparse.NormalizeURL(srv.URL)
	client, err := c.Client(url)
	require.NoError(t, err)
	_, err = client.CreateGroup(context.Background(), "create-order", "billing", coord.CreateRequest{InitialShardCount: 4, RequestedBy: "test"})
	require.NoError(t, err)
	return c, url, &calls
}

func change(coordinator, prefix string) planparse.Change {
	return planparse.Change{Action: planparse.ActionScale, StreamPrefix: prefix, ConsumerGroup: "billing", Coordinator: coordinator,
		Stream: planparse.StreamKey(coordinator, prefix)}
}

// Every stream a change set mentions is read from its coordinator, keyed by
// stream; one client per coordinator is kept.
func TestReadLiveStreams(t *testing.T) {
	c, url, _ := world(t)
	got, live := c.Read(context.Background(), &planparse.ChangeSet{Changes: []planparse.Change{change(url, "create-order")}})
	require.True(t, got.Consulted)
	require.True(t, got.Reachable, got.Error)
	ls := live[planparse.StreamKey(url, "create-order")]
	require.Equal(t, url, ls.Coordinator)
	require.Len(t, ls.Groups, 1)
	require.Equal(t, 4, ls.Groups[0].ShardCount)
	again, err := c.Client(url)
	require.NoError(t, err)
	first, err := c.Client(url)
	require.NoError(t, err)
	require.Same(t, first, again)
}

// A coordinator URL the configuration does not cover (the URL comes from the
// pull request) is never called: the read reports it, and the policy fails
// closed on it.
func TestReadNeverCallsAnUnconfiguredCoordinator(t *testing.T) {
	c, url, _ := world(t)
	var attacked atomic.Int32
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attacked.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(attacker.Close)
	other := planparse.NormalizeURL(attacker.URL)
	got, live := c.Read(context.Background(), &planparse.ChangeSet{Changes: []planparse.Change{
		change(url, "create-order"), change(other, "create-order")}})
	require.True(t, got.Consulted)
	require.False(t, got.Reachable)
	require.Contains(t, got.Error, other+" is not covered by this server's configuration")
	require.Nil(t, live)
	require.Zero(t, attacked.Load(), "the unconfigured coordinator is never called")
	none, live := c.Read(context.Background(), &planparse.ChangeSet{})
	require.False(t, none.Consulted, "nothing to read")
	require.Nil(t, live)
}

// A change whose coordinator URL is unknown until apply (issue 21) is not
// skipped: the read reports there is no coordinator to read, and still reads
// the streams it can.
func TestReadReportsAnUnknownCoordinator(t *testing.T) {
	c, url, _ := world(t)
	unknown := planparse.Change{Address: `module.stream_group["orders/billing"].terraform_data.stream_group`, Action: planparse.ActionCreate,
		StreamPrefix: "orders", ConsumerGroup: "billing", Stream: "orders", Unknown: []string{planparse.FieldCoordinatorURL}}
	for name, changes := range map[string][]planparse.Change{
		"alone":           {unknown},
		"with a read one": {change(url, "create-order"), unknown},
	} {
		t.Run(name, func(t *testing.T) {
			got, live := c.Read(context.Background(), &planparse.ChangeSet{Changes: changes})
			require.True(t, got.Consulted)
			require.False(t, got.Reachable)
			require.Equal(t, unknown.Address+": coordinator_base_url unknown until apply, so there is no coordinator to read", got.Error)
			if len(changes) > 1 {
				require.Equal(t, 4, live[planparse.StreamKey(url, "create-order")].Groups[0].ShardCount)
			}
		})
	}
}
