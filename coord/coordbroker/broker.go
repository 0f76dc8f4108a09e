package coordbroker

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Coordinator is one configured coordinator: the broker intercepts its host
// and adds its credentials.
type Coordinator struct {
	// URL is the configured URL prefix (coordinators[].url_prefix).
	URL      string
	Username string
	Password string
	// RootCAs verifies an https coordinator; nil is the system's trust.
	RootCAs *x509.CertPool
}

// Config is one job's broker.
type Config struct {
	Coordinators []Coordinator
	// Changes is the judged change set; ignored when ReadOnly.
	Changes []Change
	// ReadOnly refuses every mutation (plans and drift checks).
	ReadOnly bool
	// RequestIDPrefix starts every passed mutation's X-Request-Id, e.g.
	// "shardgate-streams-pr7-42"; "-<n>" is appended.
	RequestIDPrefix string
	// RequestedBy and Reason replace the bodies' requestedBy and reason.
	RequestedBy string
	Reason      string
	// OnRefuse, when set, hears each refused call as it happens (the job stops).
	OnRefuse func(Call)
	// TunnelIdle ends a tunnel idle that long; DefaultTunnelIdle when 0.
	TunnelIdle time.Duration
	// Egress are the hosts besides the coordinators the job's processes may
	// reach through the broker, tunnelled untouched: host:port or
	// *.suffix:port (terraform.egress). Every other is refused with 403.
	Egress []string
	// Output, when set, is the job's output: the broker writes each refused
	// connection's reason there.
	Output io.Writer
}

// Call is one coordinator call through the broker, for the audit record.
type Call struct {
	Method string `json:"method"`
	// Path is the request's path on the coordinator.
	Path      string `json:"path"`
	Status    int    `json:"status"`
	RequestID string `json:"request_id,omitempty"`
	Allowed   bool   `json:"allowed"`
	// Summary names the call with its count, e.g.
	// "POST /coord/v1/streams/payment-events/scale (targetShardCount 40)".
	Summary string `json:"summary"`
	// Reason says why a call was refused.
	Reason string `json:"reason,omitempty"`
}

// upstream is a configured coordinator as the broker matches it.
type upstream struct {
	// origin is "scheme://host:port" with the port always written.
	origin   string
	scheme   string
	hostport string
	port     string
	// addrs are the coordinator's addresses, resolved when the broker starts:
	// a request to any of them on port is this coordinator's, whatever name
	// it uses.
	addrs []net.IP
	// basePath is the configured prefix's path, without trailing slash.
	basePath string
	coord    Coordinator
	// transport reaches this coordinator, verified with its own roots.
	transport *http.Transport
}

// Broker is a running per-job broker. Close it when the job ends.
type Broker struct {
	cfg       Config
	upstreams []upstream
	token     string
	ln        net.Listener
	srv       *http.Server
	ca        *jobCA
	direct    *http.Transport
	// egress are the parsed Config.Egress; egressTransport reaches them.
	egress          []egressRule
	egressTransport *http.Transport
	outMu           sync.Mutex
	tls             *tlsFront
	done            chan struct{}
	closeOnce       sync.Once

	mu    sync.Mutex
	calls []Call
	seq   int
	// reads and mutations count the calls kept; omittedReads the reads
	// beyond MaxReads and omittedRefusals the refused calls beyond
	// MaxMutations (the job stops at the first), counted only.
	reads, mutations, omittedReads, omittedRefusals int
	// tunnels are the open CONNECT tunnels, which Close ends.
	tunnels map[net.Conn]struct{}
}

// MaxReads bounds the reads a broker keeps in Calls; later ones are only
// counted (OmittedReads). Every mutation is kept: a job may make at most
// MaxMutations, and the broker refuses the next (the job stops).
const (
	MaxReads     = 200
	MaxMutations = 1000
)

// DefaultTunnelIdle ends a tunnel through which nothing passed for that
// long (Config.TunnelIdle).
const DefaultTunnelIdle = 5 * time.Minute

// Start starts a broker on 127.0.0.1 on a random port.
func Start(cfg Config) (*Broker, error) {
	b := &Broker{cfg: cfg, done: make(chan struct{}), tunnels: map[net.Conn]struct{}{}}
	if b.cfg.TunnelIdle <= 0 {
		b.cfg.TunnelIdle = DefaultTunnelIdle
	}
	for _, c := range cfg.Coordinators {
		up, err := parseUpstream(c)
		if err != nil {
			return nil, err
		}
		b.upstreams = append(b.upstreams, up)
	}
	egress, err := parseEgress(cfg.Egress)
	if err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	b.egress = egress
	b.egressTransport = &http.Transport{Proxy: nil, DisableCompression: true, DialContext: b.guardedDialer().DialContext}
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("make broker token: %w", err)
	}
	b.token = hex.EncodeToString(tok[:])
	ca, err := newJobCA()
	if err != nil {
		return nil, err
	}
	b.ca = ca
	b.direct = &http.Transport{Proxy: nil, DisableCompression: true}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the coordinator broker: %w", err)
	}
	b.ln = ln
	b.tls = newTLSFront(b)
	b.srv = &http.Server{Handler: http.HandlerFunc(b.serveProxy), ReadHeaderTimeout: time.Minute, IdleTimeout: b.cfg.TunnelIdle}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

func parseUpstream(c Coordinator) (upstream, error) {
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return upstream{}, fmt.Errorf("coordinator %q is not an http or https URL", c.URL)
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	hostport := net.JoinHostPort(strings.ToLower(u.Hostname()), port)
	t := &http.Transport{Proxy: nil, DisableCompression: true, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: c.RootCAs}}
	// A coordinator that does not resolve now is known by its spelling only
	// (and its calls fail); other names cannot reach it either.
	addrs := lookup(context.Background(), u.Hostname())
	return upstream{origin: scheme + "://" + hostport, scheme: scheme, hostport: hostport, port: port, addrs: addrs,
		basePath: strings.TrimRight(u.EscapedPath(), "/"), coord: c, transport: t}, nil
}

// ProxyURL is the proxy terraform's processes use, with the job's secret.
func (b *Broker) ProxyURL() string {
	return "http://job:" + b.token + "@" + b.ln.Addr().String()
}

// Port is the broker's port on 127.0.0.1 (a sandbox limiting ports allows it).
func (b *Broker) Port() int { return b.ln.Addr().(*net.TCPAddr).Port }

// Close stops the broker; calls in flight fail and open tunnels end.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() { close(b.done) })
	b.mu.Lock()
	for c := range b.tunnels {
		c.Close()
	}
	b.mu.Unlock()
	for _, up := range b.upstreams {
		up.transport.CloseIdleConnections()
	}
	b.direct.CloseIdleConnections()
	b.egressTransport.CloseIdleConnections()
	return b.srv.Close()
}

func (b *Broker) closed() <-chan struct{} { return b.done }

// Allow makes the broker judge mutations against the judged change set
// (it starts read-only when Config.ReadOnly: the apply's own re-plan runs
// before the judgement).
func (b *Broker) Allow(changes []Change) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cfg.Changes, b.cfg.ReadOnly = append([]Change(nil), changes...), false
}

// judgement is the current change set and mode.
func (b *Broker) judgement() ([]Change, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cfg.Changes, b.cfg.ReadOnly
}

// Calls lists the coordinator calls so far, in order: every mutation and
// the first MaxReads reads.
func (b *Broker) Calls() []Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Call(nil), b.calls...)
}

// Refused returns the first refused call, if any.
func (b *Broker) Refused() (Call, bool) {
	for _, c := range b.Calls() {
		if !c.Allowed {
			return c, true
		}
	}
	return Call{}, false
}

// ErrRefused is what a job reports when its broker refused a call.
var ErrRefused = errors.New("refused a coordinator call the review did not judge")

// RefusedError names the refused call: "refused a coordinator call the review
// did not judge: POST …/payment-events/scale (targetShardCount 40)".
func RefusedError(c Call) error {
	return fmt.Errorf("%w: %s", ErrRefused, c.Summary)
}

// track keeps an open tunnel's connections for Close; the returned func
// forgets them. ok is false when the broker is closed already.
func (b *Broker) track(conns ...net.Conn) (untrack func(), ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.done:
		return nil, false
	default:
	}
	for _, c := range conns {
		b.tunnels[c] = struct{}{}
	}
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range conns {
			delete(b.tunnels, c)
		}
	}, true
}

// authorized checks the job's secret in Proxy-Authorization.
func (b *Broker) authorized(r *http.Request) bool {
	h := r.Header.Get("Proxy-Authorization")
	raw, ok := strings.CutPrefix(h, "Basic ")
	if !ok {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(dec, []byte("job:"+b.token)) == 1
}

// noteDenied tells the job's output why the broker refused a connection.
func (b *Broker) noteDenied(msg string) {
	if b.cfg.Output == nil {
		return
	}
	b.outMu.Lock()
	defer b.outMu.Unlock()
	_, _ = fmt.Fprintln(b.cfg.Output, msg)
}

// OmittedReads counts the reads beyond MaxReads that Calls does not list.
func (b *Broker) OmittedReads() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.omittedReads
}

// OmittedRefusals counts the refused calls past MaxMutations that Calls does
// not list.
func (b *Broker) OmittedRefusals() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.omittedRefusals
}

// mutationsFull says whether the job made MaxMutations already.
func (b *Broker) mutationsFull() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mutations >= MaxMutations
}

func (b *Broker) record(c Call, mutation bool) {
	b.mu.Lock()
	switch {
	case (mutation || !c.Allowed) && b.mutations >= MaxMutations:
		b.omittedRefusals++ // a passed one is refused past the bound
	case mutation || !c.Allowed:
		b.mutations++
		b.calls = append(b.calls, c)
	case b.reads < MaxReads:
		b.reads++
		b.calls = append(b.calls, c)
	default:
		b.omittedReads++
	}
	b.mu.Unlock()
	if !c.Allowed && b.cfg.OnRefuse != nil {
		b.cfg.OnRefuse(c)
	}
}

func (b *Broker) nextRequestID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return fmt.Sprintf("%s-%d", b.cfg.RequestIDPrefix, b.seq)
}
