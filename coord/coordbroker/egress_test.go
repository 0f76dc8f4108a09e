package coordbroker_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/internal/testing/canarytest"
)

// The broker is no open relay: beside the coordinators it reaches only the
// egress list. A loopback listener, the metadata address and a listed name
// that resolves to loopback are refused with 403 and the reason, by CONNECT
// and by absolute-form request alike; the job's output names each refusal.
func TestBrokerEgressAllowList(t *testing.T) {
	_, srv := newSim(t)
	canary, accepted := canarytest.Listen(t, "127.0.0.1")
	_, port, _ := net.SplitHostPort(canary)
	var out bytes.Buffer
	b := startBroker(t, coordbroker.Config{ReadOnly: true, Output: &out,
		Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword}},
		Egress:       []string{"localhost:" + port, "*.registry.example:443"}})
	c := proxied(t, b, nil)
	for _, target := range []string{canary, "169.254.169.254:80", "localhost:" + port, "[::1]:" + port} {
		resp, err := c.Get("http://" + target + "/latest/meta-data/")
		require.NoError(t, err, target)
		text := readAll(t, resp)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s: %s", target, text)
		require.Contains(t, text, "shardgate broker: refused GET "+target, target)

		conn := dialBroker(t, b)
		status := connectStatus(t, b, conn, target)
		require.Equal(t, http.StatusForbidden, status, target)
	}
	require.Zero(t, accepted.Load(), "the canary heard from the job")
	require.Contains(t, out.String(), "shardgate broker: refused CONNECT 127.0.0.1:"+port+": not in terraform.egress")
	require.Contains(t, out.String(), "shardgate broker: refused CONNECT localhost:"+port+": 127.0.0.1:"+port+" is a loopback address")
	require.Empty(t, b.Calls(), "no coordinator call")
	require.NoError(t, coordbroker.CheckEgress([]string{"registry.terraform.io:443", "*.example.com:8443", "10.0.0.7:5432"}))
	for _, bad := range []string{"registry.terraform.io", "*:443", "a.*.example:443", "host:0", "host:https"} {
		require.Error(t, coordbroker.CheckEgress([]string{bad}), bad)
	}
}

// A coordinator is known by its address: configured as localhost, a call to
// 127.0.0.1 (or "localhost.") on its port is judged as its own, with its
// credentials, and a CONNECT to it (which would carry it unjudged) is refused.
func TestBrokerKnowsCoordinatorByAddress(t *testing.T) {
	sim, srv := newSim(t)
	seed(t, srv, "orders", "billing", 4)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	configured := "http://localhost:" + port
	b := startBroker(t, coordbroker.Config{
		Coordinators: []coordbroker.Coordinator{{URL: configured, Username: simUser, Password: simPassword}},
		Changes:      []coordbroker.Change{{Coordinator: configured, StreamPrefix: "orders", ConsumerGroup: "billing", Action: coordbroker.Scale, Shards: 5}}})
	c := proxied(t, b, nil)
	for _, base := range []string{"http://127.0.0.1:" + port, "http://localhost.:" + port} {
		status, text := do(t, c, "POST", base+"/coord/v1/streams/orders/scale", body("targetShardCount", 40))
		require.Equal(t, http.StatusForbidden, status, "%s: %s", base, text)
		require.Contains(t, text, "SHARDGATE_NOT_JUDGED")
	}
	status, text := do(t, c, "POST", "http://127.0.0.1:"+port+"/coord/v1/streams/orders/scale", body("targetShardCount", 5))
	require.Equal(t, http.StatusAccepted, status, text)
	require.Equal(t, simUser, jobAudit(sim, 1)[0].Principal, "judged and sent with the coordinator's credentials")
	require.Equal(t, http.StatusForbidden, connectStatus(t, b, dialBroker(t, b), "127.0.0.1:"+port))
	require.Len(t, jobAudit(sim, 1), 1)
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
