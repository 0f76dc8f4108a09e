package coordbroker_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/coord/coordsim"
)

// swappableSim serves whichever simulator is current, so that each attack
// meets a fresh coordinator behind one broker.
type swappableSim struct{ cur atomic.Pointer[coordsim.Sim] }

func (s *swappableSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.cur.Load().ServeHTTP(w, r)
}

// fresh puts a new simulator behind the server, with orders/billing at 4.
func (s *swappableSim) fresh(t testing.TB) *coordsim.Sim {
	sim := coordsim.New(coordsim.WithUsers(coordsim.User{Name: simUser, Password: simPassword, Roles: []coordsim.Role{coordsim.RoleWrite}}))
	s.cur.Store(sim)
	rec := simCall(sim, "POST", "/coord/v1/streams/orders/groups/billing", body("initialShardCount", 4))
	if rec.Code != http.StatusCreated {
		t.Fatalf("seed: %d %s", rec.Code, rec.Body)
	}
	return sim
}

// simCall calls the simulator directly with the real credentials.
func simCall(sim *coordsim.Sim, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.SetBasicAuth(simUser, simPassword)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	sim.ServeHTTP(rec, req)
	return rec
}

// actedOn is what the simulator did: the target counts of orders/billing's
// migrations and the count of orders/new, if it was created (0 if not).
func actedOn(t testing.TB, sim *coordsim.Sim) (targets []int, created int) {
	rec := simCall(sim, "GET", "/coord/v1/monitoring/streams/orders/groups/billing/migrations", "")
	var ms coord.MigrationList
	if err := json.Unmarshal(rec.Body.Bytes(), &ms); err != nil {
		t.Fatalf("migrations: %v %s", err, rec.Body)
	}
	for _, m := range ms.Migrations {
		targets = append(targets, m.ToShardCount)
	}
	rec = simCall(sim, "GET", "/coord/v1/monitoring/streams/orders/groups/new", "")
	if rec.Code == http.StatusOK {
		var g coord.Group
		if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil {
			t.Fatalf("group: %v %s", err, rec.Body)
		}
		created = g.ShardCount
	}
	return targets, created
}

// judgedBroker judges orders/billing 4 -> 5 and the create of orders/new at 3.
func judgedBroker(t testing.TB, url string) *coordbroker.Broker {
	b, err := coordbroker.Start(coordbroker.Config{RequestIDPrefix: "shardgate-streams-pr7-42",
		RequestedBy: "shardgate:acme/streams#7 merged by octocat", Reason: "apply 1a2b3c4 of acme/streams#7",
		Coordinators: []coordbroker.Coordinator{{URL: url, Username: simUser, Password: simPassword}},
		Changes: []coordbroker.Change{
			{Coordinator: url, StreamPrefix: "orders", ConsumerGroup: "billing", Action: coordbroker.Scale, Shards: 5},
			{Coordinator: url, StreamPrefix: "orders", ConsumerGroup: "new", Action: coordbroker.Create, Shards: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// The attacks: bodies whose count a case-insensitive decoder (Go's,
// the simulator's) reads differently from an exact-key reader, or that carry
// what the review did not judge. Each is refused and the simulator does
// nothing; the judged body passes and the simulator acts on the judged count
// with the broker's own requestedBy and reason.
func TestBrokerForwardsOnlyTheJudgedBody(t *testing.T) {
	var sims swappableSim
	sims.fresh(t)
	srv := httptest.NewServer(&sims)
	t.Cleanup(srv.Close)
	b := judgedBroker(t, srv.URL)
	c := proxied(t, b, nil)
	scale := srv.URL + "/coord/v1/streams/orders/scale"
	for _, a := range []struct{ name, url, body, reason string }{
		{"a lower-case twin", scale, `{"targetShardCount":5,"targetshardcount":40}`, `"targetShardCount" and "targetshardcount"`},
		{"a twin in another case", scale, `{"targetShardCount":5,"targetShardcount":40}`, `"targetShardCount" and "targetShardcount"`},
		{"a twin with the long s, raw", scale, `{"targetShardCount":5,"targetſhardCount":40}`, `"targetShardCount" and "target\u017fhardCount"`},
		{"a twin with the long s, escaped", scale, `{"targetShardCount":5,"target\u017fhardCount":40}`, `"targetShardCount" and "target\u017fhardCount"`},
		{"the twin first", scale, `{"TARGETSHARDCOUNT":40,"targetShardCount":5}`, `"TARGETSHARDCOUNT", which the review did not judge`},
		{"a duplicate", scale, `{"targetShardCount":5,"targetShardCount":40}`, `"targetShardCount" twice`},
		{"the count only under another case", scale, `{"targetshardcount":40}`, `"targetshardcount", which the review did not judge`},
		{"requestedBy under another case", scale, `{"targetShardCount":5,"requestedBy":"x","requestedby":"me"}`, `"requestedBy" and "requestedby"`},
		{"an unknown key", scale, `{"targetShardCount":5,"force":true}`, `"force", which the review did not judge`},
		{"a count written as a fraction", scale, `{"targetShardCount":5.0}`, "not a whole number"},
		{"a second JSON value", scale, `{"targetShardCount":5} {"targetShardCount":40}`, "more than one JSON value"},
		{"a query", scale + "?targetShardCount=40", `{"targetShardCount":5}`, "no call with a query"},
		{"another count", scale, `{"targetShardCount":40}`, "the review judged no such call"},
		{"a create twin", srv.URL + "/coord/v1/streams/orders/groups/new", `{"initialShardCount":3,"initialshardcount":40}`, `"initialShardCount" and "initialshardcount"`},
	} {
		sim := sims.fresh(t)
		status, text := do(t, c, "POST", a.url, a.body)
		require.Equal(t, http.StatusForbidden, status, "%s: %s", a.name, text)
		var refusal coord.ErrorBody
		require.NoError(t, json.Unmarshal([]byte(text), &refusal), text)
		require.Equal(t, "SHARDGATE_NOT_JUDGED", refusal.ErrorCode, a.name)
		require.Contains(t, refusal.Message, a.reason, a.name)
		targets, created := actedOn(t, sim)
		require.Empty(t, targets, "%s: the simulator scaled", a.name)
		require.Zero(t, created, "%s: the simulator created the group", a.name)
		require.Len(t, sim.Audit(), 1, "%s: the coordinator heard of it", a.name)
	}

	sim := sims.fresh(t)
	status, text := do(t, c, "POST", scale, `{"targetShardCount":5,"requestedBy":"module","reason":null}`)
	require.Equal(t, http.StatusAccepted, status, text)
	status, text = do(t, c, "POST", srv.URL+"/coord/v1/streams/orders/groups/new", `{"initialShardCount":3}`)
	require.Equal(t, http.StatusCreated, status, text)
	targets, created := actedOn(t, sim)
	require.Equal(t, []int{5}, targets)
	require.Equal(t, 3, created)
	for _, e := range sim.Audit()[1:] {
		require.Equal(t, "shardgate:acme/streams#7 merged by octocat", e.RequestedBy)
		require.Equal(t, "apply 1a2b3c4 of acme/streams#7", e.Reason)
	}
}

// FuzzBrokerForwardsOnlyTheJudgedCount: whatever body a job's process sends
// to the judged scale or create, the simulator (a fresh one each time) acts
// on the judged count or not at all.
func FuzzBrokerForwardsOnlyTheJudgedCount(f *testing.F) {
	for _, seed := range []string{
		`{"targetShardCount":5}`, `{"targetShardCount":5,"targetshardcount":40}`, `{"targetShardCount":5,"targetShardCount":40}`,
		`{"targetShardCount":5,"target\u017fhardCount":40}`, `{"targetShardCount":5,"targetſhardCount":40}`,
		`{"targetShardCount":5,"requestedBy":"a","reason":"b"}`, `{"targetShardCount":5,"\u0074argetShardCount":40}`,
		`{"targetShardCount":5e0}`, `{"targetShardCount":"40"}`, `[{"targetShardCount":40}]`, ` {"targetShardCount" : 5 } `,
		`{"targetShardCount":5,"targetShardCount\u0000":40}`, `{"targetShardCount":5}x`,
	} {
		f.Add(false, seed)
		f.Add(true, strings.ReplaceAll(strings.ReplaceAll(seed, "target", "initial"), ":5", ":3"))
	}
	var sims swappableSim
	sims.fresh(f)
	srv := httptest.NewServer(&sims)
	f.Cleanup(srv.Close)
	b := judgedBroker(f, srv.URL)
	u, err := url.Parse(b.ProxyURL())
	require.NoError(f, err)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	f.Fuzz(func(t *testing.T, create bool, body string) {
		sim := sims.fresh(t)
		url := srv.URL + "/coord/v1/streams/orders/scale"
		if create {
			url = srv.URL + "/coord/v1/streams/orders/groups/new"
		}
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		targets, created := actedOn(t, sim)
		for _, n := range targets {
			require.Equal(t, 5, n, "the simulator scaled to an unjudged count (broker answered %d)", resp.StatusCode)
		}
		if created != 0 {
			require.Equal(t, 3, created, "the simulator created an unjudged count (broker answered %d)", resp.StatusCode)
		}
	})
}
