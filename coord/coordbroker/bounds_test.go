package coordbroker_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord/coordbroker"
)

// A job that reads without end leaves a bounded list: every mutation, the
// first MaxReads reads, and a count of the rest.
func TestBrokerKeepsBoundedCalls(t *testing.T) {
	_, srv := newSim(t)
	seed(t, srv, "orders", "billing", 4)
	b := startBroker(t, coordbroker.Config{
		Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword}},
		Changes:      []coordbroker.Change{{Coordinator: srv.URL, StreamPrefix: "orders", ConsumerGroup: "billing", Action: coordbroker.Scale, Shards: 5}}})
	c := proxied(t, b, nil)
	const reads = coordbroker.MaxReads + 300
	for i := 0; i < reads; i++ {
		status, _ := do(t, c, "GET", srv.URL+"/coord/v1/monitoring/health", "")
		require.Equal(t, 200, status)
		if i == reads/2 {
			status, text := do(t, c, "POST", srv.URL+"/coord/v1/streams/orders/scale", body("targetShardCount", 5))
			require.Equal(t, 202, status, text)
		}
	}
	calls := b.Calls()
	require.Len(t, calls, coordbroker.MaxReads+1)
	require.Equal(t, reads-coordbroker.MaxReads, b.OmittedReads())
	require.Equal(t, "POST", calls[len(calls)-1].Method, "the mutation after the bound is kept")
}

// dialBroker opens a connection to the broker.
func dialBroker(t *testing.T, b *coordbroker.Broker) net.Conn {
	t.Helper()
	u, err := url.Parse(b.ProxyURL())
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// connectStatus sends CONNECT target with the job's secret on conn and
// returns the broker's answer.
func connectStatus(t *testing.T, b *coordbroker.Broker, conn net.Conn, target string) int {
	t.Helper()
	u, err := url.Parse(b.ProxyURL())
	require.NoError(t, err)
	req := &http.Request{Method: "CONNECT", URL: &url.URL{Opaque: target}, Host: target, Header: http.Header{}}
	pw, _ := u.User.Password()
	req.SetBasicAuth(u.User.Username(), pw)
	req.Header.Set("Proxy-Authorization", req.Header.Get("Authorization"))
	req.Header.Del("Authorization")
	require.NoError(t, req.Write(conn))
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	require.NoError(t, err)
	return resp.StatusCode
}

// connectTunnel opens a CONNECT tunnel through the broker to target.
func connectTunnel(t *testing.T, b *coordbroker.Broker, target string) net.Conn {
	t.Helper()
	conn := dialBroker(t, b)
	require.Equal(t, 200, connectStatus(t, b, conn, target))
	return conn
}

// echoListener echoes what each connection sends.
func echoListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln
}

// ended says whether conn was closed by the other side: a read returns
// EOF rather than the guard deadline's timeout.
func ended(t *testing.T, conn net.Conn, within time.Duration) bool {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(within)))
	_, err := conn.Read(make([]byte, 1))
	var ne net.Error
	if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
		return true
	}
	return false
}

// Close ends the job's open tunnels; a tunnel nothing passes through ends
// after TunnelIdle.
func TestBrokerTunnelsEnd(t *testing.T) {
	echo := echoListener(t)
	t.Run("closed by Close", func(t *testing.T) {
		b, err := coordbroker.Start(coordbroker.Config{Egress: []string{echo.Addr().String()}})
		require.NoError(t, err)
		conn := connectTunnel(t, b, echo.Addr().String())
		_, err = fmt.Fprint(conn, "ping")
		require.NoError(t, err)
		got := make([]byte, 4)
		_, err = io.ReadFull(conn, got)
		require.NoError(t, err)
		require.Equal(t, "ping", string(got))
		require.NoError(t, b.Close())
		require.True(t, ended(t, conn, 10*time.Second), "the tunnel outlived Close")
	})
	t.Run("idle", func(t *testing.T) {
		b := startBroker(t, coordbroker.Config{Egress: []string{echo.Addr().String()}, TunnelIdle: 200 * time.Millisecond})
		conn := connectTunnel(t, b, echo.Addr().String())
		require.True(t, ended(t, conn, 10*time.Second), "an idle tunnel stayed open")
	})
}

// Refused calls are kept up to MaxMutations; the rest (in flight after the
// first stopped the job) are counted.
func TestBrokerBoundsRefusedCalls(t *testing.T) {
	_, srv := newSim(t)
	b := startBroker(t, coordbroker.Config{ReadOnly: true,
		Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword}}})
	c := proxied(t, b, nil)
	for i := 0; i < coordbroker.MaxMutations+5; i++ {
		status, _ := do(t, c, "POST", srv.URL+"/coord/v1/streams/orders/scale", body("targetShardCount", 5))
		require.Equal(t, 403, status)
	}
	require.Len(t, b.Calls(), coordbroker.MaxMutations)
	require.Equal(t, 5, b.OmittedRefusals())
}
