package coordbroker_test

import (
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/coord/coordsim"
)

// maxOverheadPerCall is the broker's budget per coordinator call (issue 20).
const maxOverheadPerCall = 5 * time.Millisecond

// BenchmarkBrokerOverhead times the calls an apply makes (a judged scale and a
// routing read, over http and over https through the job CA) directly and
// through the broker, and reports the difference per call.
func BenchmarkBrokerOverhead(b *testing.B) {
	for _, tc := range []struct {
		name  string
		start func(http.Handler) *httptest.Server
	}{{"http", httptest.NewServer}, {"https", httptest.NewTLSServer}} {
		b.Run(tc.name, func(b *testing.B) {
			sim := coordsim.New(coordsim.WithUsers(coordsim.User{Name: simUser, Password: simPassword, Roles: []coordsim.Role{coordsim.RoleWrite}}))
			srv := tc.start(sim)
			defer srv.Close()
			roots := x509.NewCertPool()
			if srv.Certificate() != nil {
				roots.AddCert(srv.Certificate())
			}
			broker, err := coordbroker.Start(coordbroker.Config{RequestIDPrefix: "shardgate-bench-pr1-1",
				Coordinators: []coordbroker.Coordinator{{URL: srv.URL, Username: simUser, Password: simPassword, RootCAs: roots}},
				Changes:      []coordbroker.Change{{Coordinator: srv.URL, StreamPrefix: "orders", ConsumerGroup: "billing", Action: coordbroker.Create, Shards: 4}}})
			if err != nil {
				b.Fatal(err)
			}
			defer broker.Close()
			jobRoots := x509.NewCertPool()
			jobRoots.AddCert(broker.CACertificate())
			u := broker.ProxyURL()
			via := proxiedB(b, u, jobRoots)
			direct := srv.Client()

			call := func(c *http.Client, auth bool) {
				for _, r := range []struct{ method, path, body string }{
					{"POST", "/coord/v1/streams/orders/groups/billing", `{"initialShardCount":4,"requestedBy":"x","reason":"y"}`},
					{"GET", "/coord/v1/streams/orders/groups/billing/producer-routing", ""},
				} {
					req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
					if auth {
						req.SetBasicAuth(simUser, simPassword)
					}
					req.Header.Set("Content-Type", "application/json")
					resp, err := c.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			call(direct, true) // create; every later create is the 409 repeat
			call(via, false)
			var directTime, viaTime time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				call(direct, true)
				t1 := time.Now()
				call(via, false)
				directTime += t1.Sub(t0)
				viaTime += time.Since(t1)
			}
			overhead := (viaTime - directTime) / time.Duration(2*b.N)
			b.ReportMetric(float64(overhead.Microseconds())/1000, "overhead-ms/call")
			if overhead > maxOverheadPerCall {
				b.Errorf("the broker adds %v per coordinator call; the budget is %v", overhead, maxOverheadPerCall)
			}
		})
	}
}

func proxiedB(b *testing.B, proxy string, roots *x509.CertPool) *http.Client {
	b.Helper()
	u, err := urlParse(proxy)
	if err != nil {
		b.Fatal(err)
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: tlsConfig(roots)}}
}
