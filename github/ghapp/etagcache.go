package ghapp

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Bounds of the conditional-request cache, shared by every installation.
const (
	// DefaultETagCacheEntries bounds the answers kept.
	DefaultETagCacheEntries = 4096
	// DefaultETagCacheBytes bounds the bodies kept, all installations
	// together; the least recently used go first.
	DefaultETagCacheBytes = 64 << 20
	// DefaultETagCacheBody is the largest body kept; larger answers are
	// read again in full each time.
	DefaultETagCacheBody = 1 << 20
)

// ETagCache keeps the last JSON answer to each GET with its ETag, per
// installation (an ETag is valid for the credential that got it), so the
// next GET asks If-None-Match and GitHub answers 304 Not Modified, which
// costs no rate-limit budget. Bounded in entries and bytes. Safe for
// concurrent use.
type ETagCache struct {
	maxBytes, maxBody int64

	mu      sync.Mutex
	entries *simplelru.LRU[etagKey, *etagEntry]
	bytes   int64
}

// etagKey is one representation: the installation, the URL (query
// included) and the media type asked for.
type etagKey struct {
	installationID int64
	url, accept    string
}

type etagEntry struct {
	etag   string
	header http.Header
	body   []byte
}

// NewETagCache returns a cache of at most entries answers, bytes of bodies
// in all and body bytes per answer (0: the defaults).
func NewETagCache(entries int, bytes, body int64) *ETagCache {
	if entries <= 0 {
		entries = DefaultETagCacheEntries
	}
	if bytes <= 0 {
		bytes = DefaultETagCacheBytes
	}
	if body <= 0 {
		body = DefaultETagCacheBody
	}
	c := &ETagCache{maxBytes: bytes, maxBody: min(body, bytes)}
	c.entries, _ = simplelru.NewLRU(entries, func(_ etagKey, e *etagEntry) { c.bytes -= int64(len(e.body)) }) // a positive size cannot fail
	return c
}

// Len is the number of answers kept.
func (c *ETagCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}

// Bytes is the size of the bodies kept.
func (c *ETagCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

func (c *ETagCache) get(k etagKey) (*etagEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Get(k)
}

func (c *ETagCache) add(k etagKey, e *etagEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Remove(k)
	c.entries.Add(k, e)
	c.bytes += int64(len(e.body))
	for c.bytes > c.maxBytes {
		c.entries.RemoveOldest()
	}
}

func (c *ETagCache) remove(k etagKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Remove(k)
}

// forget drops an installation's answers (the App was uninstalled).
func (c *ETagCache) forget(installationID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.entries.Keys() {
		if k.installationID == installationID {
			c.entries.Remove(k)
		}
	}
}

// etagTransport is the conditional-request layer of one installation's
// transport. A GET it has an ETag for goes out with If-None-Match; a 304
// answer is handed up as 200 with the kept body, the kept headers updated by
// the 304's (its rate-limit headers among them), so callers see no
// difference. Never kept: anything but a GET's 200 JSON answer with an
// ETag, the installation-token exchange, tarball and zipball downloads (and
// their redirects), bodies over the cache's per-answer bound, and requests
// that are already conditional or ask for a range.
type etagTransport struct {
	next           http.RoundTripper
	installationID int64
	cache          *ETagCache
}

func (t *etagTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !cacheable(req) {
		return t.next.RoundTrip(req)
	}
	k := etagKey{installationID: t.installationID, url: req.URL.String(), accept: req.Header.Get("Accept")}
	kept, ok := t.cache.get(k)
	out := req
	if ok {
		out = req.Clone(req.Context())
		out.Header.Set("If-None-Match", kept.etag)
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	switch {
	case ok && resp.StatusCode == http.StatusNotModified:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return kept.answer(req, resp), nil
	case resp.StatusCode == http.StatusOK:
		if ok {
			t.cache.remove(k) // changed: what keep does not keep is gone
		}
		return t.keep(k, resp), nil
	case ok && resp.StatusCode == http.StatusNotFound:
		t.cache.remove(k) // gone: its ETag will not match again
	}
	return resp, nil
}

// cacheable is a plain GET of the API that may be asked again conditionally.
func cacheable(req *http.Request) bool {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" ||
		req.Header.Get("If-Modified-Since") != "" || req.Header.Get("Range") != "" {
		return false
	}
	p := req.URL.Path
	if strings.HasSuffix(p, "/access_tokens") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "tarball" || seg == "zipball" {
			return false
		}
	}
	return true
}

// keep stores a 200 JSON answer with an ETag and small enough, handing the
// caller the same body; any other answer passes untouched.
func (t *etagTransport) keep(k etagKey, resp *http.Response) *http.Response {
	etag := resp.Header.Get("ETag")
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if etag == "" || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) ||
		resp.ContentLength > t.cache.maxBody {
		return resp
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, t.cache.maxBody+1))
	if err != nil || int64(len(body)) > t.cache.maxBody {
		// The caller reads what was read, then the rest (or the error).
		rest := resp.Body
		if err != nil {
			rest = io.NopCloser(&errReader{err: err})
		}
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), rest), resp.Body}
		return resp
	}
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	t.cache.add(k, &etagEntry{etag: etag, header: resp.Header.Clone(), body: body})
	return resp
}

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

// answer is the kept 200 answer, its headers updated by the 304's.
func (e *etagEntry) answer(req *http.Request, notModified *http.Response) *http.Response {
	h := e.header.Clone()
	for name, v := range notModified.Header {
		h[name] = v
	}
	h.Del("Content-Length")
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK,
		Proto: notModified.Proto, ProtoMajor: notModified.ProtoMajor, ProtoMinor: notModified.ProtoMinor,
		Header: h, Body: io.NopCloser(bytes.NewReader(e.body)), ContentLength: int64(len(e.body)),
		Request: req, TLS: notModified.TLS,
	}
}
