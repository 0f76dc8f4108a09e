package coordbroker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// maxBody bounds a coordinator request body the broker reads to judge.
const maxBody = 1 << 20

// hopHeaders are connection-scoped and never forwarded.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Authenticate",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// serveProxy is the proxy's front: CONNECT tunnels and absolute-form requests.
func (b *Broker) serveProxy(w http.ResponseWriter, r *http.Request) {
	if !b.authorized(r) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="shardgate coordinator broker"`)
		http.Error(w, "shardgate broker: this proxy serves one terraform job", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		b.connect(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "shardgate broker: only http:// requests and CONNECT go through this proxy", http.StatusBadRequest)
		return
	}
	hostport := withPort(r.URL.Host, "80")
	target, coordinator, why := b.resolveTarget(r.Context(), "http", hostport)
	if why != "" {
		b.denyEgress(w, r.Method, hostport, why)
		return
	}
	if !coordinator {
		b.passThrough(w, r, b.egressTransport)
		return
	}
	if up, ok := b.upstreamFor("http", target, r.URL.EscapedPath()); ok {
		b.serveCoordinator(w, r, up)
		return
	}
	// A path outside every configured prefix of a coordinator's host:
	// forwarded as it came, without credentials.
	r.URL.Host = target
	b.passThrough(w, r, b.direct)
}

// connect terminates TLS for a configured https coordinator and tunnels the
// hosts of the egress list untouched; it refuses every other.
func (b *Broker) connect(w http.ResponseWriter, r *http.Request) {
	hostport := withPort(r.Host, "443")
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "shardgate broker: cannot tunnel", http.StatusInternalServerError)
		return
	}
	target, intercept, why := b.resolveTarget(r.Context(), "https", hostport)
	if why != "" {
		b.denyEgress(w, r.Method, hostport, why)
		return
	}
	var conn net.Conn
	if !intercept {
		var err error
		conn, err = b.dialEgress(r.Context(), hostport)
		if why, denied := deniedBy(err); denied {
			b.denyEgress(w, r.Method, hostport, why)
			return
		}
		if err != nil {
			http.Error(w, "shardgate broker: connect "+hostport+": "+err.Error(), http.StatusBadGateway)
			return
		}
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		client.Close()
		if conn != nil {
			conn.Close()
		}
		return
	}
	if intercept {
		host, _, _ := net.SplitHostPort(hostport)
		b.tls.serve(client, target, host)
		return
	}
	b.tunnel(client, conn, io.LimitReader(buf, int64(buf.Reader.Buffered())))
}

// serveCoordinator judges one call to a configured coordinator and forwards it
// with the real credentials, or refuses it with 403.
func (b *Broker) serveCoordinator(w http.ResponseWriter, r *http.Request, up *upstream) {
	path := r.URL.EscapedPath()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "shardgate broker: request body unreadable or too large", http.StatusBadRequest)
		return
	}
	v := b.judge(up, r.Method, path, r.URL.RawQuery, body)
	if v.allowed && v.mutation && b.mutationsFull() {
		v.allowed, v.reason = false, fmt.Sprintf("the job made %d coordinator changes already", MaxMutations)
	}
	call := Call{Method: clip(r.Method, 16), Path: clip(path, maxPathShown), Allowed: v.allowed, Summary: v.summary, Reason: v.reason}
	if !v.allowed {
		call.Status = http.StatusForbidden
		b.record(call, v.mutation)
		refuse(w, "shardgate refused a coordinator call the review did not judge: "+v.summary+": "+v.reason)
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, up.origin+r.URL.RequestURI(), nil)
	if err != nil {
		http.Error(w, "shardgate broker: "+err.Error(), http.StatusBadRequest)
		return
	}
	if v.mutation {
		// Only what the broker wrote: the judged body and its own headers.
		body = v.body
		call.RequestID = b.nextRequestID()
		out.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"},
			"User-Agent": {clip(r.UserAgent(), 100)}, "X-Request-Id": {call.RequestID}}
	} else {
		out.Header = r.Header.Clone()
		for _, h := range hopHeaders {
			out.Header.Del(h)
		}
		out.Header.Del("Authorization")
		out.Header.Del("Cookie")
	}
	if up.coord.Username != "" || up.coord.Password != "" {
		out.SetBasicAuth(up.coord.Username, up.coord.Password)
	}
	if len(body) > 0 || r.ContentLength > 0 {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
	}
	resp, err := up.transport.RoundTrip(out)
	if err != nil {
		call.Status = http.StatusBadGateway
		b.record(call, v.mutation)
		http.Error(w, "shardgate broker: the coordinator did not answer", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	call.Status = resp.StatusCode
	b.record(call, v.mutation)
	copyResponse(w, resp)
}

// passThrough forwards a plain-http request to a host that is no configured
// coordinator, as it came (minus the proxy's own headers).
func (b *Broker) passThrough(w http.ResponseWriter, r *http.Request, t http.RoundTripper) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := t.RoundTrip(out)
	if why, denied := deniedBy(err); denied {
		b.denyEgress(w, r.Method, r.URL.Host, why)
		return
	}
	if err != nil {
		http.Error(w, "shardgate broker: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	copyResponse(w, resp)
}

func copyResponse(w http.ResponseWriter, resp *http.Response) {
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// refuse answers 403 in the coordinator's error shape, so clients that print
// errorCode and message show why.
func refuse(w http.ResponseWriter, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "FORBIDDEN", "errorCode": "SHARDGATE_NOT_JUDGED", "message": message})
}

// withPort adds the scheme's default port when hostport has none.
func withPort(hostport, port string) string {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host, p = strings.Trim(hostport, "[]"), port
	}
	// "coord.example." is the name "coord.example".
	return net.JoinHostPort(strings.TrimSuffix(strings.ToLower(host), "."), p)
}

// tunnel copies between a CONNECT client and its target until either ends,
// nothing passes for TunnelIdle, or the broker closes.
func (b *Broker) tunnel(client, target net.Conn, buffered io.Reader) {
	defer client.Close()
	defer target.Close()
	untrack, ok := b.track(client, target)
	if !ok {
		return
	}
	defer untrack()
	idle := b.cfg.TunnelIdle
	go func() {
		_, _ = io.Copy(target, io.MultiReader(buffered, idleReader{client, idle}))
		if tc, ok := target.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	_, _ = io.Copy(client, idleReader{target, idle})
}

// idleReader fails a Read that waits longer than idle for data.
type idleReader struct {
	c    net.Conn
	idle time.Duration
}

func (r idleReader) Read(p []byte) (int, error) {
	if err := r.c.SetReadDeadline(time.Now().Add(r.idle)); err != nil {
		return 0, err
	}
	return r.c.Read(p)
}
