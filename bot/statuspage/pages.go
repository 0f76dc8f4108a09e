package statuspage

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages are parsed when first used (New uses them): a process that never serves
// the status page (shardgate check) does not parse them as it starts.
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.ParseFS(templateFS, "templates/*.html"))
})

// pageWriteTimeout bounds writing one HTML page (the listener sets no write
// timeout, for the sake of the log streams).
const pageWriteTimeout = 30 * time.Second

// jobPage is what a job's page shows.
type jobPage struct {
	Title    string
	Kind     string
	PR       link
	Project  string
	SHA      link
	Started  string
	Replica  string
	Ended    bool
	LockWait string
	LogURL   string
	Nonce    string
}

func (h *Handler) serveOverview(w http.ResponseWriter, r *http.Request) {
	v := h.build(r.Context())
	w.Header().Set("Refresh", "10")
	h.render(w, "overview", v, "")
}

func (h *Handler) serveJob(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	l, ok := h.o.Logs.Get(id)
	if !ok {
		http.Error(w, "no such job on this replica: its log has ended long ago, or another replica runs it", http.StatusNotFound)
		return
	}
	s := l.Snapshot()
	nonce := newNonce()
	p := &jobPage{Title: string(s.Info.Kind) + " " + s.Info.Ref.String(), Kind: string(s.Info.Kind), PR: h.prLink(s.Info.Ref),
		Project: s.Info.Project, SHA: h.commitLink(s.Info.Ref, s.Info.SHA), Started: stamp(s.Info.Started), Replica: h.o.Replica,
		Ended: s.Ended, LogURL: "/jobs/" + url.PathEscape(id) + "/log", Nonce: nonce}
	if s.LockWait != nil {
		p.LockWait = lockWaitText(s.LockWait)
	}
	h.o.Redactor.Scrub(p)
	p.Nonce, p.LogURL = nonce, "/jobs/"+url.PathEscape(id)+"/log"
	h.render(w, "job", p, nonce)
}

// render executes a template into a buffer (so a failure is a clean 500)
// and sends it with a content security policy that lets only the page's
// own inline script run.
func (h *Handler) render(w http.ResponseWriter, name string, data any, nonce string) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(pageWriteTimeout))
	var buf bytes.Buffer
	if err := pages().ExecuteTemplate(&buf, name, data); err != nil {
		h.o.Log.WithError(err).Error("status page: render " + name)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	script := "'none'"
	if nonce != "" {
		script = "'nonce-" + nonce + "'"
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'; script-src "+script)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

func newNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Log streams: each event carries the lines written since the last one
// (one "data:" field a line) and the offset after them as its id, so a
// reconnecting EventSource resumes where it was (Last-Event-ID).
const (
	sseKeepalive    = 15 * time.Second
	sseWriteTimeout = 30 * time.Second
)

func (h *Handler) serveLog(w http.ResponseWriter, r *http.Request) {
	l, ok := h.o.Logs.Get(r.PathValue("id"))
	if !ok {
		http.Error(w, "no such job on this replica", http.StatusNotFound)
		return
	}
	rc := http.NewResponseController(w)
	// The listener's ReadTimeout would end the stream (net/http cancels the
	// request once the connection's read deadline passes): a stream lasts
	// as long as its job.
	_ = rc.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	off, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	keepalive := time.NewTicker(sseKeepalive)
	defer keepalive.Stop()
	for {
		c := l.Read(max(off, 0))
		var ev bytes.Buffer
		if c.Skipped {
			ev.WriteString("event: skipped\ndata: earlier output was dropped (the log keeps the newest output only)\n\n")
		}
		if len(c.Lines) > 0 {
			fmt.Fprintf(&ev, "id: %d\n", c.Next)
			for _, line := range c.Lines {
				ev.WriteString("data: " + sseSafe(h.o.Redactor.Redact(line)) + "\n")
			}
			ev.WriteString("\n")
		}
		if c.Ended {
			ev.WriteString("event: end\ndata: the job has ended\n\n")
		}
		if ev.Len() > 0 && !h.send(w, rc, ev.Bytes()) || c.Ended {
			return
		}
		off = c.Next
		select {
		case <-r.Context().Done():
			return
		case <-c.Changed:
		case <-keepalive.C:
			if !h.send(w, rc, []byte(": keepalive\n\n")) {
				return
			}
		}
	}
}

// send writes one event with its own deadline, and flushes it.
func (h *Handler) send(w http.ResponseWriter, rc *http.ResponseController, b []byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// sseSafe keeps a line one "data:" field: a carriage return in terraform's
// output would otherwise end the field and let the rest be read as another
// (an "event: end", an "id:").
func sseSafe(s string) string { return strings.ReplaceAll(s, "\r", "") }
