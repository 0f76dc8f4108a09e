package coordbroker_test

import (
	"crypto/x509"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/coord/coordsim"
)

// brokerEnv is the environment a terraform job's processes get: the broker's
// proxy and CA bundle and the placeholder credentials, nothing secret.
func brokerEnv(t *testing.T, b *coordbroker.Broker) []string {
	t.Helper()
	bundle, err := b.WriteCABundle(t.TempDir())
	require.NoError(t, err)
	env := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range b.Env(bundle) {
		env = append(env, k+"="+v)
	}
	return env
}

// runSh runs a shell script with env and returns its output and exit code.
func runSh(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	require.NoError(t, err)
	return string(out), 0
}

// TestBrokerUpstreamModule runs the module's apply.sh (real sh and curl)
// through the broker: create, scale and the 409 repeat paths pass with the
// broker's credentials and audit fields; the module never holds a password.
func TestBrokerUpstreamModule(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("apply.sh needs curl")
	}
	sim, srv := newSim(t)
	script := filepath.Join("..", "..", "examples", "modules", "stream-group", "apply.sh")
	apply := func(b *coordbroker.Broker, group string, count int) (string, int) {
		env := append(brokerEnv(t, b), "COORDINATOR_BASE_URL="+srv.URL, "STREAM_PREFIX=orders", "CONSUMER_GROUP="+group,
			"SHARD_COUNT="+strconv.Itoa(count), "TIMEOUT_SECONDS=5", "POLL_INTERVAL_SECONDS=1",
			"COORDINATOR_USERNAME="+coordbroker.PlaceholderCredential, "COORDINATOR_PASSWORD="+coordbroker.PlaceholderCredential)
		for _, e := range env {
			require.NotContains(t, e, simPassword)
		}
		return runSh(t, env, script)
	}
	judged := func(action coordbroker.Action, count int) *coordbroker.Broker {
		return startBroker(t, coordbroker.Config{
			Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword}},
			Changes:      []coordbroker.Change{{Coordinator: srv.URL, StreamPrefix: "orders", ConsumerGroup: "billing", Action: action, Shards: count}}})
	}

	out, code := apply(judged(coordbroker.Create, 4), "billing", 4)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "created orders/billing with 4 shards")

	b := judged(coordbroker.Scale, 6)
	out, code = apply(b, "billing", 6)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "already exists")
	require.Contains(t, out, "scaling stream orders from 4 to 6")
	out, code = apply(b, "billing", 6) // a repeat: 409 on create, no scale
	require.Equal(t, 0, code, out)
	_, refused := b.Refused()
	require.False(t, refused)

	// The group not judged is refused at its create.
	out, code = apply(b, "audit", 6)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "403")

	for _, e := range sim.Audit() {
		require.Equal(t, simUser, e.Principal)
		require.Equal(t, "shardgate:acme/streams#7 merged by octocat", e.RequestedBy)
		require.True(t, strings.HasPrefix(e.RequestID, "shardgate-streams-pr7-42-"), e.RequestID)
		require.NotEqual(t, "audit", e.ConsumerGroup, "a refused create reached the coordinator")
	}
	require.Len(t, sim.Audit(), 4, "create; create (409) and scale; create (409)")
}

// TestBrokerAttack is the attack: a line in the module's script that
// scales another stream with whatever credentials it finds. Through the
// broker it is refused; around it (--noproxy) the coordinator answers 401.
func TestBrokerAttack(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("the attack needs curl")
	}
	sim, srv := newSim(t)
	seed(t, srv, "payment-events", "ledger", 4)
	b := startBroker(t, coordbroker.Config{
		Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword}},
		Changes:      []coordbroker.Change{{Coordinator: srv.URL, StreamPrefix: "create-order", ConsumerGroup: "billing", Action: coordbroker.Scale, Shards: 5}}})
	attack := filepath.Join(t.TempDir(), "attack.sh")
	line := `curl -sS -o /dev/stderr -w '%{http_code}' ${NOPROXY:+--noproxy "$NOPROXY"} -u "${COORDINATOR_USERNAME:-x}:${COORDINATOR_PASSWORD:-x}" -H 'Content-Type: application/json' ` +
		`-X POST --data '{"targetShardCount":40,"requestedBy":"me","reason":"x"}' "$COORDINATOR_BASE_URL/coord/v1/streams/payment-events/scale"`
	require.NoError(t, os.WriteFile(attack, []byte(line+"\n"), 0o755))
	env := append(brokerEnv(t, b), "COORDINATOR_BASE_URL="+srv.URL,
		"COORDINATOR_USERNAME="+coordbroker.PlaceholderCredential, "COORDINATOR_PASSWORD="+coordbroker.PlaceholderCredential)

	out, _ := runSh(t, append(env, "NOPROXY="), attack)
	require.True(t, strings.HasSuffix(out, "403"), out)
	require.Contains(t, out, "refused a coordinator call the review did not judge")
	refused, ok := b.Refused()
	require.True(t, ok)
	require.Equal(t, "POST /coord/v1/streams/payment-events/scale (targetShardCount 40)", refused.Summary)

	out, _ = runSh(t, append(env, "NOPROXY=*"), attack)
	require.True(t, strings.HasSuffix(out, "401"), out)

	for _, e := range sim.Audit()[1:] {
		require.NotEqual(t, "SUCCESS", e.Outcome, "the attack scaled payment-events")
	}
}

// The module's script against an https coordinator: curl trusts the job CA
// through CURL_CA_BUNDLE, and the broker verifies the coordinator with the
// configured roots.
func TestBrokerUpstreamModuleOverHTTPS(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("apply.sh needs curl")
	}
	sim := coordsim.New(coordsim.WithUsers(coordsim.User{Name: simUser, Password: simPassword, Roles: []coordsim.Role{coordsim.RoleWrite}}))
	srv := httptest.NewTLSServer(sim)
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	b := startBroker(t, coordbroker.Config{
		Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword, RootCAs: roots}},
		Changes:      []coordbroker.Change{{Coordinator: srv.URL, StreamPrefix: "orders", ConsumerGroup: "billing", Action: coordbroker.Create, Shards: 4}}})
	env := append(brokerEnv(t, b), "COORDINATOR_BASE_URL="+srv.URL, "STREAM_PREFIX=orders", "CONSUMER_GROUP=billing",
		"SHARD_COUNT=4", "TIMEOUT_SECONDS=5", "POLL_INTERVAL_SECONDS=1",
		"COORDINATOR_USERNAME="+coordbroker.PlaceholderCredential, "COORDINATOR_PASSWORD="+coordbroker.PlaceholderCredential)
	out, code := runSh(t, env, filepath.Join("..", "..", "examples", "modules", "stream-group", "apply.sh"))
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "created orders/billing with 4 shards")
	require.Len(t, sim.Audit(), 1)
	require.Equal(t, "shardgate-streams-pr7-42-1", sim.Audit()[0].RequestID)

	// Without the bundle curl refuses the broker's certificate: only the
	// sandbox trusts the job CA.
	var plain []string
	for _, e := range env {
		if !strings.HasPrefix(e, "CURL_CA_BUNDLE=") && !strings.HasPrefix(e, "SSL_CERT_FILE=") {
			plain = append(plain, e)
		}
	}
	out, code = runSh(t, plain, filepath.Join("..", "..", "examples", "modules", "stream-group", "apply.sh"))
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "coordinator unreachable")
}
