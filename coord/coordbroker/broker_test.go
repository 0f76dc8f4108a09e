package coordbroker_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/coord/coordsim"
)

const (
	simUser     = "terraform"
	simPassword = "broker-Secret-pw"
)

// newSim is the coordinator simulator with one WRITE user, over http.
func newSim(t *testing.T) (*coordsim.Sim, *httptest.Server) {
	t.Helper()
	sim := coordsim.New(coordsim.WithUsers(coordsim.User{Name: simUser, Password: simPassword, Roles: []coordsim.Role{coordsim.RoleWrite}}))
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, srv
}

func startBroker(t *testing.T, cfg coordbroker.Config) *coordbroker.Broker {
	t.Helper()
	if cfg.RequestIDPrefix == "" {
		cfg.RequestIDPrefix = "shardgate-streams-pr7-42"
		cfg.RequestedBy = "shardgate:acme/streams#7 merged by octocat"
		cfg.Reason = "apply 1a2b3c4 of acme/streams#7"
	}
	b, err := coordbroker.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// proxied is a Go client whose every request goes through the broker (as a
// provider's would through HTTPS_PROXY), trusting roots.
func proxied(t *testing.T, b *coordbroker.Broker, roots *x509.CertPool) *http.Client {
	t.Helper()
	u, err := url.Parse(b.ProxyURL())
	require.NoError(t, err)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: tlsConfig(roots)}}
}

func tlsConfig(roots *x509.CertPool) *tls.Config { return &tls.Config{RootCAs: roots} }

var urlParse = url.Parse

// do sends one request, with the placeholder credentials terraform holds.
func do(t *testing.T, c *http.Client, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.SetBasicAuth(coordbroker.PlaceholderCredential, coordbroker.PlaceholderCredential)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "module-chosen-id")
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// seed creates a group directly with the real credentials (before the job).
func seed(t *testing.T, srv *httptest.Server, prefix, group string, n int) {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+"/coord/v1/streams/"+prefix+"/groups/"+group, strings.NewReader(body("initialShardCount", n)))
	require.NoError(t, err)
	req.SetBasicAuth(simUser, simPassword)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
}

// jobAudit is the simulator's audit after the seeding: the job's own calls.
func jobAudit(sim *coordsim.Sim, seeded int) []coordsim.AuditEvent { return sim.Audit()[seeded:] }

func body(count string, n int) string {
	return `{"` + count + `":` + itoa(n) + `,"requestedBy":"terraform","reason":"module text"}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestBrokerJudgesCoordinatorCalls(t *testing.T) {
	sim, srv := newSim(t)
	var heard []coordbroker.Call
	b := startBroker(t, coordbroker.Config{
		Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword}},
		Changes: []coordbroker.Change{
			{Coordinator: srv.URL + "/coord/v1", StreamPrefix: "create-order", ConsumerGroup: "billing", Action: coordbroker.Scale, Shards: 5},
			{Coordinator: srv.URL, StreamPrefix: "old-stream", ConsumerGroup: "gone", Action: coordbroker.Delete},
		},
		OnRefuse: func(c coordbroker.Call) { heard = append(heard, c) },
	})
	c := proxied(t, b, nil)
	api := srv.URL + "/coord/v1"
	seed(t, srv, "create-order", "billing", 4)
	seed(t, srv, "payment-events", "ledger", 4)
	seed(t, srv, "old-stream", "gone", 2)

	steps := []struct {
		name, method, path, body string
		want                     int
	}{
		{"the module's create at the judged count meets the existing group", "POST", "/streams/create-order/groups/billing", body("initialShardCount", 5), 409},
		{"a read passes", "GET", "/streams/create-order/groups/billing/producer-routing", "", 200},
		{"the judged scale passes", "POST", "/streams/create-order/scale", body("targetShardCount", 5), 202},
		{"its repeat passes", "POST", "/streams/create-order/scale", body("targetShardCount", 5), 409},
		{"another count is refused", "POST", "/streams/create-order/scale", body("targetShardCount", 6), 403},
		{"another stream is refused", "POST", "/streams/payment-events/scale", body("targetShardCount", 40), 403},
		{"a create at another count is refused", "POST", "/streams/create-order/groups/billing", body("initialShardCount", 12), 403},
		{"a create without a count is refused", "POST", "/streams/create-order/groups/other", `{"requestedBy":"x"}`, 403},
		{"a delete the review did not judge is refused", "DELETE", "/streams/create-order/groups/billing", `{"requestedBy":"x","reason":"y","force":true}`, 403},
		{"the waived delete passes", "DELETE", "/streams/old-stream/groups/gone", `{"requestedBy":"x","reason":"y","force":true}`, 200},
		{"a rollback is refused", "POST", "/streams/create-order/groups/billing/migrations/x/rollback", `{}`, 403},
		{"an escaped path is refused", "POST", "/streams/create-order%2Fscale", body("targetShardCount", 5), 403},
		{"a long path is refused, and named short", "POST", "/streams/" + strings.Repeat("x", 5000) + "/scale", body("targetShardCount", 5), 403},
	}
	for _, s := range steps {
		status, text := do(t, c, s.method, api+s.path, s.body)
		require.Equal(t, s.want, status, "%s: %s", s.name, text)
		if s.want == 403 {
			require.Contains(t, text, "SHARDGATE_NOT_JUDGED", s.name)
			require.Contains(t, text, "the review did not judge", s.name)
		}
	}

	for _, e := range jobAudit(sim, 3) {
		require.NotEqual(t, "payment-events", e.StreamPrefix, "a refused call reached the coordinator")
		require.Equal(t, simUser, e.Principal, "the broker's credentials")
		require.Equal(t, "shardgate:acme/streams#7 merged by octocat", e.RequestedBy)
		require.Equal(t, "apply 1a2b3c4 of acme/streams#7", e.Reason)
		require.True(t, strings.HasPrefix(e.RequestID, "shardgate-streams-pr7-42-"), e.RequestID)
	}
	require.Len(t, jobAudit(sim, 3), 4, "create, scale, its repeat, the delete")

	calls := b.Calls()
	require.Len(t, calls, len(steps))
	refused, ok := b.Refused()
	require.True(t, ok)
	require.Equal(t, "POST /coord/v1/streams/create-order/scale (targetShardCount 6)", refused.Summary)
	require.Len(t, heard, 8)
	require.Less(t, len(heard[7].Summary), 300)
	require.Less(t, len(heard[7].Path), 300)
	require.Equal(t, "POST /coord/v1/streams/payment-events/scale (targetShardCount 40)", heard[1].Summary)
	require.EqualError(t, coordbroker.RefusedError(heard[1]),
		"refused a coordinator call the review did not judge: POST /coord/v1/streams/payment-events/scale (targetShardCount 40)")
	require.Equal(t, "shardgate-streams-pr7-42-1", calls[0].RequestID)
	require.Empty(t, calls[1].RequestID, "reads carry the module's id")
}

func TestBrokerReadOnly(t *testing.T) {
	sim, srv := newSim(t)
	seed(t, srv, "create-order", "billing", 4)
	b := startBroker(t, coordbroker.Config{ReadOnly: true,
		Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword}},
		Changes:      []coordbroker.Change{{Coordinator: srv.URL, StreamPrefix: "create-order", ConsumerGroup: "billing", Action: coordbroker.Scale, Shards: 5}}})
	c := proxied(t, b, nil)
	status, _ := do(t, c, "GET", srv.URL+"/coord/v1/monitoring/groups", "")
	require.Equal(t, 200, status)
	status, text := do(t, c, "POST", srv.URL+"/coord/v1/streams/create-order/scale", body("targetShardCount", 5))
	require.Equal(t, 403, status)
	require.Contains(t, text, "only reads the coordinator")
	require.Empty(t, jobAudit(sim, 1))
}

func TestBrokerJudgesEachCoordinatorSeparately(t *testing.T) {
	simA, srvA := newSim(t)
	simB, srvB := newSim(t)
	seed(t, srvA, "orders", "billing", 4)
	seed(t, srvB, "orders", "billing", 4)
	b := startBroker(t, coordbroker.Config{
		Coordinators: []coordbroker.Coordinator{
			{URL: srvA.URL, Username: simUser, Password: simPassword},
			{URL: srvB.URL, Username: simUser, Password: simPassword}},
		Changes: []coordbroker.Change{{Coordinator: srvA.URL, StreamPrefix: "orders", ConsumerGroup: "billing", Action: coordbroker.Scale, Shards: 6}}})
	c := proxied(t, b, nil)
	status, _ := do(t, c, "POST", srvA.URL+"/coord/v1/streams/orders/scale", body("targetShardCount", 6))
	require.Equal(t, 202, status)
	status, _ = do(t, c, "POST", srvB.URL+"/coord/v1/streams/orders/scale", body("targetShardCount", 6))
	require.Equal(t, 403, status, "the same prefix on another coordinator was not judged")
	require.Len(t, jobAudit(simA, 1), 1)
	require.Empty(t, jobAudit(simB, 1))
}

func TestBrokerHTTPSCoordinator(t *testing.T) {
	sim := coordsim.New(coordsim.WithUsers(coordsim.User{Name: simUser, Password: simPassword, Roles: []coordsim.Role{coordsim.RoleWrite}}))
	srv := httptest.NewTLSServer(sim)
	t.Cleanup(srv.Close)
	seed(t, srv, "orders", "billing", 4)
	upstreamRoots := x509.NewCertPool()
	upstreamRoots.AddCert(srv.Certificate())
	// Another https host the job may reach (a provider registry): tunnelled.
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "registry auth="+r.Header.Get("Authorization"))
	}))
	t.Cleanup(other.Close)

	b := startBroker(t, coordbroker.Config{Egress: []string{other.Listener.Addr().String()},
		Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword, RootCAs: upstreamRoots}},
		Changes:      []coordbroker.Change{{Coordinator: srv.URL, StreamPrefix: "orders", ConsumerGroup: "billing", Action: coordbroker.Scale, Shards: 6}}})
	bundle, err := b.WriteCABundle(t.TempDir())
	require.NoError(t, err)
	pem, err := os.ReadFile(bundle)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(pem))
	roots.AddCert(other.Certificate())
	c := proxied(t, b, roots)

	status, text := do(t, c, "POST", srv.URL+"/coord/v1/streams/orders/scale", body("targetShardCount", 6))
	require.Equal(t, 202, status, text)
	status, _ = do(t, c, "POST", srv.URL+"/coord/v1/streams/orders/scale", body("targetShardCount", 40))
	require.Equal(t, 403, status)
	require.Len(t, jobAudit(sim, 1), 1)
	require.Equal(t, "shardgate-streams-pr7-42-1", jobAudit(sim, 1)[0].RequestID)

	// The other host's certificate is its own: the tunnel is untouched, and
	// the job's placeholder is all it sends.
	status, text = do(t, c, "GET", other.URL+"/v1/providers", "")
	require.Equal(t, 200, status)
	require.NotContains(t, text, simPassword)

	// The job CA is not trusted outside the sandbox: a client without the
	// bundle refuses the broker's certificate.
	plain := proxied(t, b, x509.NewCertPool())
	_, err = plain.Get(srv.URL + "/coord/v1/monitoring/groups")
	require.Error(t, err)
}

func TestBrokerRefusesOtherJobs(t *testing.T) {
	_, srv := newSim(t)
	b := startBroker(t, coordbroker.Config{Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword}}})
	u, err := url.Parse(b.ProxyURL())
	require.NoError(t, err)
	u.User = url.UserPassword("job", "another-jobs-token")
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	resp, err := c.Get(srv.URL + "/coord/v1/monitoring/groups")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusProxyAuthRequired, resp.StatusCode)
	require.Empty(t, b.Calls())
}
