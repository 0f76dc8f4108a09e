package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storetest"
)

// tcpProxy forwards connections to a target until it is cut: then every
// connection through it is closed and new ones are closed as they arrive,
// as when the database host goes away; restore lets them through again.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(c)
		}()
	}
}

// track registers c, or closes it while the proxy is cut.
func (p *tcpProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *tcpProxy) forward(c net.Conn) {
	defer p.untrack(c)
	up, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(up) {
		return
	}
	defer p.untrack(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

func (p *tcpProxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// cut closes every connection and refuses new ones until restore.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *tcpProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// countingStore counts the calls that claim work: job claims and the scans
// of the apply queue behind the scheduler's passes.
type countingStore struct {
	*store.Postgres
	claims, applyScans atomic.Int64
}

func (c *countingStore) Claim(ctx context.Context, owner string) (*store.Job, error) {
	c.claims.Add(1)
	return c.Postgres.Claim(ctx, owner)
}

func (c *countingStore) List(ctx context.Context, bucket, prefix string) ([]store.KV, error) {
	if strings.HasPrefix(bucket, "applies") { // the apply queue's buckets
		c.applyScans.Add(1)
	}
	return c.Postgres.List(ctx, bucket, prefix)
}

// gatedHandler handles pull_request jobs, counting each delivery it ran;
// deliveries named block-* wait until the gate opens.
type gatedHandler struct {
	gate    chan struct{}
	started chan string
	mu      sync.Mutex
	runs    map[string]int
}

func (h *gatedHandler) Handles() []string { return []string{"pull_request"} }

func (h *gatedHandler) Handle(ctx context.Context, _, delivery string, _ []byte) error {
	if strings.HasPrefix(delivery, "block-") {
		h.started <- delivery
		select {
		case <-h.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs[delivery]++
	return nil
}

func (h *gatedHandler) ran(delivery string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs[delivery]
}

// lostDBServer is a Server on a PostgreSQL store reached through a proxy.
type lostDBServer struct {
	t       *testing.T
	srv     *Server
	st      *countingStore
	web     *httptest.Server
	proxy   *tcpProxy
	handler *gatedHandler
	logs    *lockedBuffer
	// consulted counts, per part, the times it asked whether claiming is
	// paused and was told yes.
	dispatcherPaused, schedulerPaused atomic.Int64
}

func newLostDBServer(t *testing.T) *lostDBServer {
	t.Helper()
	raw := storetest.PostgresURL(t)
	u, err := url.Parse(raw)
	require.NoError(t, err)
	proxy := startProxy(t, u.Host)
	u.Host = proxy.addr()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pg, err := store.OpenPostgres(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })
	l := &lostDBServer{t: t, st: &countingStore{Postgres: pg}, proxy: proxy, logs: &lockedBuffer{},
		handler: &gatedHandler{gate: make(chan struct{}), started: make(chan string, 4), runs: map[string]int{}}}

	gh := githubtest.New(t)
	cfg := &serverconfig.Config{
		Listen: "127.0.0.1:0", GitHubAPIURL: gh.URL(), AppID: gh.AppID(),
		PrivateKey: serverconfig.NewSecret(string(gh.AppPrivateKeyPEM())), WebhookSecret: serverconfig.NewSecret(testSecret),
		TerraformBinary: tftest.Binary(t), LockTimeout: time.Minute,
		ApproverUsers: []string{approver}, Policy: policy.DefaultConfig(), AttestationTTL: time.Hour,
		QueueSize: 100, Workers: 2, WorkDir: t.TempDir(), ConvergeTimeout: time.Minute, ApplyLease: 5 * time.Second,
	}
	log := logrus.New()
	log.SetOutput(l.logs)
	log.SetFormatter(&logrus.JSONFormatter{})
	l.srv, err = New(cfg, l.st, WithLogEntry(logrus.NewEntry(log)), withHandler(l.handler))
	require.NoError(t, err)
	l.srv.dispatcher.Poll, l.srv.scheduler.Poll, l.srv.health.Every = 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond
	paused := l.srv.health.Paused
	count := func(n *atomic.Int64) func() bool {
		return func() bool {
			p := paused()
			if p {
				n.Add(1)
			}
			return p
		}
	}
	l.srv.dispatcher.Paused, l.srv.scheduler.Paused = count(&l.dispatcherPaused), count(&l.schedulerPaused)
	l.web = httptest.NewServer(l.srv.Handler())
	t.Cleanup(l.web.Close)
	require.NoError(t, l.srv.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		l.srv.Close(ctx)
		if t.Failed() {
			t.Logf("service logs:\n%s", l.logs)
		}
	})
	return l
}

// deliver sends a pull_request delivery and returns the status and job id.
func (l *lostDBServer) deliver(id string) (int, string) {
	l.t.Helper()
	resp, err := githubtest.Deliver(l.web.URL+"/webhook", "pull_request", []byte(`{}`), testSecret, githubtest.WithDeliveryID(id))
	require.NoError(l.t, err)
	defer resp.Body.Close()
	var r webhook.Reply
	require.NoError(l.t, json.NewDecoder(resp.Body).Decode(&r))
	return resp.StatusCode, r.JobID
}

func (l *lostDBServer) readyz() (int, string) {
	l.t.Helper()
	resp, err := http.Get(l.web.URL + "/readyz")
	require.NoError(l.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(l.t, err)
	return resp.StatusCode, string(b)
}

func (l *lostDBServer) errorLines() int {
	return strings.Count(l.logs.String(), `"level":"error"`)
}

// The database goes away under a running replica: /readyz says so, intake
// refuses (503) what it cannot persist, and workers and the apply scheduler
// claim nothing, quietly, while it is away. A job that ran meanwhile keeps
// its outcome until the database is back. Then everything acknowledged
// before the cut runs exactly once, and the refused deliveries, sent again,
// run once too.
func TestLostDatabasePausesAndLosesNoAcknowledgedDelivery(t *testing.T) {
	l := newLostDBServer(t)
	ctx := context.Background()
	acked := map[string]string{} // delivery → job id

	// block-0 holds one worker; the other runs the rest at once.
	code, id := l.deliver("block-0")
	require.Equal(t, 202, code)
	acked["block-0"] = id
	require.Equal(t, "block-0", <-l.handler.started)
	for i := range 3 {
		code, id := l.deliver(fmt.Sprintf("before-%d", i))
		require.Equal(t, 202, code)
		acked[fmt.Sprintf("before-%d", i)] = id
	}
	require.Eventually(t, func() bool {
		return l.handler.ran("before-0")+l.handler.ran("before-1")+l.handler.ran("before-2") == 3
	}, 30*time.Second, 10*time.Millisecond, "the free worker runs the deliveries acknowledged before the cut")
	code, body := l.readyz()
	require.Equal(t, 200, code, body)

	l.proxy.cut()
	for i := range 3 {
		code, _ := l.deliver(fmt.Sprintf("during-%d", i))
		require.Equal(t, 503, code, "a delivery that cannot be persisted is refused, never acknowledged")
	}
	code, body = l.readyz()
	require.Equal(t, 503, code)
	require.Contains(t, body, "PostgreSQL store is not reachable")
	require.Eventually(t, l.srv.health.Paused, 30*time.Second, 10*time.Millisecond, "the health check notices")

	// While paused: the idle worker and the scheduler each ask several times
	// and are told to wait; none claims, scans or logs an error meanwhile.
	claims, scans, errs := l.st.claims.Load(), l.st.applyScans.Load(), l.errorLines()
	d0, s0 := l.dispatcherPaused.Load(), l.schedulerPaused.Load()
	require.Eventually(t, func() bool { return l.dispatcherPaused.Load() >= d0+5 && l.schedulerPaused.Load() >= s0+5 },
		30*time.Second, 10*time.Millisecond)
	require.Equal(t, claims, l.st.claims.Load(), "no job claimed while the store is away")
	require.Equal(t, scans, l.st.applyScans.Load(), "no apply scheduling pass while the store is away")
	require.Equal(t, errs, l.errorLines(), "no error logged per pass while the store is away")

	// block-0 finishes while the store is away: its outcome waits for it.
	close(l.handler.gate)
	require.Eventually(t, func() bool { return l.handler.ran("block-0") == 1 }, 30*time.Second, 10*time.Millisecond)
	code, _ = l.deliver("during-0")
	require.Equal(t, 503, code)

	l.proxy.restore()
	require.Eventually(t, func() bool { code, _ := l.readyz(); return code == 200 }, 30*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return !l.srv.health.Paused() }, 30*time.Second, 10*time.Millisecond)
	for i := range 3 {
		d := fmt.Sprintf("during-%d", i)
		code, id := l.deliver(d) // GitHub redelivers what was refused
		require.Equal(t, 202, code)
		acked[d] = id
	}
	for d, id := range acked {
		require.Eventually(t, func() bool {
			j, err := l.st.GetJob(ctx, id)
			return err == nil && j.State == store.JobDone
		}, 30*time.Second, 10*time.Millisecond, "delivery %s is done", d)
	}
	for d, id := range acked {
		j, err := l.st.GetJob(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 1, j.Attempts, "delivery %s was claimed once", d)
		require.Equal(t, 1, l.handler.ran(d), "delivery %s ran once", d)
	}
	require.Greater(t, l.st.claims.Load(), claims, "claiming resumed")
	require.Contains(t, l.logs.String(), "store reachable again: claiming resumed")
}
