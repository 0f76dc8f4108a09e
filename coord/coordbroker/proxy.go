package coordbroker

import (
	"bytes"
	"encoding/json"
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
	if up, ok := b.upstreamFor("http", hostport, r.URL.EscapedPath()); ok {
		b.serveCoordinator(w, r, up)
		return
	}
	b.passThrough(w, r, b.direct)
}

// connect terminates TLS for a configured https coordinator and tunnels every
// other host untouched.
func (b *Broker) connect(w http.ResponseWriter, r *http.Request) {
	hostport := withPort(r.Host, "443")
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "shardgate broker: cannot tunnel", http.StatusInternalServerError)
		return
	}
	intercept := b.interceptsHost(strings.ToLower(hostport))
	var target net.Conn
	if !intercept {
		var err error
		target, err = net.DialTimeout("tcp", hostport, 30*time.Second)
		if err != nil {
			http.Error(w, "shardgate broker: connect "+hostport+": "+err.Error(), http.StatusBadGateway)
			return
		}
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		if target != nil {
			target.Close()
		}
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		client.Close()
		if target != nil {
			target.Close()
		}
		return
	}
	if intercept {
		b.tls.serve(client, strings.ToLower(hostport))
		return
	}
	go func() {
		_, _ = io.Copy(target, io.MultiReader(io.LimitReader(buf, int64(buf.Reader.Buffered())), client))
		if tc, ok := target.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	_, _ = io.Copy(client, target)
	client.Close()
	target.Close()
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
	call := Call{Method: clip(r.Method, 16), Path: clip(path, maxPathShown), Allowed: v.allowed, Summary: v.summary, Reason: v.reason}
	if !v.allowed {
		call.Status = http.StatusForbidden
		b.record(call)
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
		b.record(call)
		http.Error(w, "shardgate broker: the coordinator did not answer", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	call.Status = resp.StatusCode
	b.record(call)
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
	if _, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(hostport)
	}
	return net.JoinHostPort(strings.ToLower(strings.Trim(hostport, "[]")), port)
}
