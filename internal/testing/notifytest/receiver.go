// Package notifytest is a notification receiver for tests: an HTTP server
// that answers with the codes it was given and keeps every request.
package notifytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Request is one request a Receiver got, with the headers shardgate signs
// and names its deliveries with.
type Request struct {
	Delivery, Event, Signature string
	Body                       []byte
	// Code is what the receiver answered.
	Code int
}

// Receiver answers each request with the next of its codes, then 200.
type Receiver struct {
	URL   string
	mu    sync.Mutex
	codes []int
	got   []Request
}

// New starts a receiver, closed when the test ends; codes are its first
// answers. Close it early to stand for a receiver that does not answer.
func New(t testing.TB, codes ...int) (*Receiver, func()) {
	r := &Receiver{codes: codes}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		code := http.StatusOK
		if len(r.codes) > 0 {
			code, r.codes = r.codes[0], r.codes[1:]
		}
		r.got = append(r.got, Request{Delivery: req.Header.Get("X-Shardgate-Delivery"), Event: req.Header.Get("X-Shardgate-Event"),
			Signature: req.Header.Get("X-Shardgate-Signature-256"), Body: b, Code: code})
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r, srv.Close
}

// Requests are the requests so far, in order.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.got...)
}
