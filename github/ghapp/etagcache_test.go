package ghapp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// etagServer answers GETs with a versioned JSON body and its ETag, 304 for a
// matching If-None-Match; it logs the If-None-Match each request carried.
type etagServer struct {
	mu          sync.Mutex
	version     int
	contentType string
	size        int // body padding
	conditional []string
	remaining   int
}

func (s *etagServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conditional = append(s.conditional, r.Header.Get("If-None-Match"))
	body := fmt.Sprintf(`{"path":%q,"version":%d,"pad":%q}`, r.URL.Path, s.version, strings.Repeat("x", s.size))
	etag := fmt.Sprintf(`W/"%s-%d"`, r.URL.Path, s.version)
	ct := s.contentType
	if ct == "" {
		ct = "application/json; charset=utf-8"
	}
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.Header().Set("X-Ratelimit-Remaining", fmt.Sprint(s.remaining))
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.remaining--
	w.Header().Set("X-Ratelimit-Remaining", fmt.Sprint(s.remaining))
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Link", `<`+r.URL.Path+`?page=2>; rel="next"`)
	_, _ = io.WriteString(w, body)
}

func (s *etagServer) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.conditional
	s.conditional = nil
	return out
}

func etagClient(t *testing.T, srv *etagServer, cache *ETagCache) (*http.Client, string) {
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &http.Client{Transport: &etagTransport{next: http.DefaultTransport, installationID: 7, cache: cache}}, ts.URL
}

func getBody(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// TestETagCacheRevalidates: a repeated GET asks If-None-Match and the 304 is
// handed up as the kept 200 with the 304's fresh headers; a changed resource
// is read again.
func TestETagCacheRevalidates(t *testing.T) {
	srv := &etagServer{remaining: 100}
	c, base := etagClient(t, srv, NewETagCache(0, 0, 0))

	first, body := getBody(t, c, base+"/repos/acme/infra/pulls/1")
	require.Equal(t, http.StatusOK, first.StatusCode)
	require.Equal(t, "99", first.Header.Get("X-Ratelimit-Remaining"))
	srv.mu.Lock()
	srv.remaining = 50 // other requests spent the budget meanwhile
	srv.mu.Unlock()
	again, againBody := getBody(t, c, base+"/repos/acme/infra/pulls/1")
	require.Equal(t, http.StatusOK, again.StatusCode, "callers see the 304 as the kept 200")
	require.Equal(t, body, againBody)
	require.Equal(t, "50", again.Header.Get("X-Ratelimit-Remaining"), "the 304's rate-limit headers")
	require.Equal(t, first.Header.Get("Link"), again.Header.Get("Link"), "the kept headers")
	require.Equal(t, first.Header.Get("Content-Type"), again.Header.Get("Content-Type"))
	require.Equal(t, int64(len(body)), again.ContentLength)
	require.Equal(t, []string{"", `W/"/repos/acme/infra/pulls/1-0"`}, srv.sent())

	srv.mu.Lock()
	srv.version++
	srv.mu.Unlock()
	changed, changedBody := getBody(t, c, base+"/repos/acme/infra/pulls/1")
	require.Equal(t, http.StatusOK, changed.StatusCode)
	require.Contains(t, changedBody, `"version":1`)
	_, body = getBody(t, c, base+"/repos/acme/infra/pulls/1")
	require.Equal(t, changedBody, body)
	require.Equal(t, []string{`W/"/repos/acme/infra/pulls/1-0"`, `W/"/repos/acme/infra/pulls/1-1"`}, srv.sent())

	// Another installation's client does not use this one's ETags.
	other := &http.Client{Transport: &etagTransport{next: http.DefaultTransport, installationID: 8,
		cache: c.Transport.(*etagTransport).cache}}
	getBody(t, other, base+"/repos/acme/infra/pulls/1")
	require.Equal(t, []string{""}, srv.sent())
}

// TestETagCacheKeepsOnlyWhatItShould: tarballs, the token exchange,
// non-JSON answers, bodies over the bound and writes are never kept.
func TestETagCacheKeepsOnlyWhatItShould(t *testing.T) {
	for _, tt := range []struct {
		name, path, contentType string
		size                    int
	}{
		{name: "tarball", path: "/repos/acme/infra/tarball/abc123"},
		{name: "zipball", path: "/repos/acme/infra/zipball/abc123"},
		{name: "token exchange", path: "/app/installations/7/access_tokens"},
		{name: "not json", path: "/x", contentType: "application/x-gzip"},
		{name: "over the body bound", path: "/big", size: 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := &etagServer{contentType: tt.contentType, size: tt.size}
			cache := NewETagCache(10, 1000, 100)
			c, base := etagClient(t, srv, cache)
			_, b1 := getBody(t, c, base+tt.path)
			_, b2 := getBody(t, c, base+tt.path)
			require.Equal(t, b1, b2, "the whole body either way")
			require.GreaterOrEqual(t, len(b1), tt.size)
			require.Equal(t, []string{"", ""}, srv.sent(), "never asked conditionally")
			require.Zero(t, cache.Len())
		})
	}
	// An answer kept, then changed into one that is not kept, is dropped.
	srv := &etagServer{}
	cache := NewETagCache(10, 1000, 100)
	c, base := etagClient(t, srv, cache)
	getBody(t, c, base+"/grows")
	require.Equal(t, 1, cache.Len())
	srv.mu.Lock()
	srv.version, srv.size = 1, 200
	srv.mu.Unlock()
	getBody(t, c, base+"/grows")
	getBody(t, c, base+"/grows")
	require.Equal(t, []string{"", `W/"/grows-0"`, ""}, srv.sent())
	require.Zero(t, cache.Len())

	resp, err := c.Post(base+"/repos/acme/infra/issues/1/comments", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Zero(t, cache.Len(), "a write's answer is not kept")
}

// TestETagCacheBounded: entries and bytes are bounded, least recently used
// first out; an evicted answer is read again in full.
func TestETagCacheBounded(t *testing.T) {
	srv := &etagServer{}
	cache := NewETagCache(2, 1<<20, 1<<10)
	c, base := etagClient(t, srv, cache)
	for _, p := range []string{"/a", "/b", "/c"} {
		getBody(t, c, base+p)
	}
	require.Equal(t, 2, cache.Len())
	srv.sent()
	getBody(t, c, base+"/a")
	getBody(t, c, base+"/c")
	require.Equal(t, []string{"", `W/"/c-0"`}, srv.sent(), "/a was evicted, /c kept")

	srv = &etagServer{size: 60}
	cache = NewETagCache(100, 200, 150)
	c, base = etagClient(t, srv, cache)
	for i := range 10 {
		getBody(t, c, fmt.Sprintf("%s/p%d", base, i))
		require.LessOrEqual(t, cache.Bytes(), int64(200))
	}
	require.Equal(t, 2, cache.Len(), "two bodies of ~90 bytes fit in 200")
	cache.forget(7)
	require.Zero(t, cache.Len())
	require.Zero(t, cache.Bytes())
}
