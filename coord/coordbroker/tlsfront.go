package coordbroker

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// tlsFront serves the https coordinator calls whose CONNECT the broker
// terminated: one http.Server fed the decrypted connections.
type tlsFront struct {
	b     *Broker
	conns chan net.Conn
	srv   *http.Server
	once  sync.Once
}

type targetKey struct{}

// taggedConn carries the CONNECT target: the coordinator a tunnel is for is
// the one it was opened to, whatever Host header comes inside.
type taggedConn struct {
	*tls.Conn
	hostport string
}

func newTLSFront(b *Broker) *tlsFront {
	f := &tlsFront{b: b, conns: make(chan net.Conn)}
	f.srv = &http.Server{
		Handler: http.HandlerFunc(f.serveHTTP), ReadHeaderTimeout: time.Minute, IdleTimeout: b.cfg.TunnelIdle,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(taggedConn); ok {
				return context.WithValue(ctx, targetKey{}, tc.hostport)
			}
			return ctx
		},
	}
	return f
}

// serve serves one terminated tunnel to the coordinator at hostport (as
// configured), with a leaf certificate for host (as the job named it).
func (f *tlsFront) serve(client net.Conn, hostport, host string) {
	f.once.Do(func() {
		ln := &chanListener{conns: f.conns, addr: f.b.ln.Addr(), done: make(chan struct{})}
		go func() { _ = f.srv.Serve(ln) }()
		go func() { <-f.b.closed(); _ = f.srv.Close(); ln.Close() }()
	})
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		return f.b.ca.leaf(host)
	}}
	select {
	case f.conns <- taggedConn{Conn: tls.Server(client, cfg), hostport: hostport}:
	case <-f.b.closed():
		client.Close()
	}
}

func (f *tlsFront) serveHTTP(w http.ResponseWriter, r *http.Request) {
	hostport, _ := r.Context().Value(targetKey{}).(string)
	if up, ok := f.b.upstreamFor("https", hostport, r.URL.EscapedPath()); ok {
		f.b.serveCoordinator(w, r, up)
		return
	}
	// A path outside every configured prefix of this host: forwarded as it
	// came, without credentials, trusting what the host's coordinators trust.
	r.URL.Scheme, r.URL.Host = "https", hostport
	f.b.passThrough(w, r, f.b.hostTransport(hostport))
}

// chanListener hands the http.Server the connections tlsFront decrypted.
type chanListener struct {
	conns chan net.Conn
	addr  net.Addr
	done  chan struct{}
	once  sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// hostTransport is the transport of a configured coordinator on hostport.
func (b *Broker) hostTransport(hostport string) *http.Transport {
	for _, up := range b.upstreams {
		if up.scheme == "https" && up.hostport == hostport {
			return up.transport
		}
	}
	return b.direct
}
