// Package listener is what shardgate serves on: the webhook listener (bound
// before anything says it serves; HTTPS with the certificate reloaded on
// SIGHUP when listen_tls is set) and the admin listener (metrics, healthz and
// the store backup), each bound at start so a wrong address stops the start.
package listener

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/store"
)

// BackupPath is the admin endpoint that streams a consistent copy of the
// embedded store.
const BackupPath = "/admin/backup"

// backupStore is a store that can copy itself while in use (store.Bolt).
type backupStore interface {
	BackupSized(w io.Writer, size func(int64)) (int64, error)
}

// BackupHandler serves GET /admin/backup: the embedded store as one bbolt
// file, taken in a single read transaction while the service keeps running.
// It requires "Authorization: Bearer <token>". The response has an exact
// Content-Length, so a download cut short is an error for the client rather
// than a short file. A store that cannot copy itself (PostgreSQL) answers 501:
// back that up with the database's own tools.
func BackupHandler(st store.Store, token serverconfig.Secret, log *logrus.Entry) http.Handler {
	want := sha256.Sum256([]byte(token.Reveal()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(given))
		// Hashes of equal length, compared in constant time; an empty
		// configured token matches nothing.
		if !ok || token.Empty() || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			log.WithField("remote", r.RemoteAddr).Warn("store backup refused: missing or wrong bearer token")
			w.Header().Set("WWW-Authenticate", `Bearer realm="shardgate admin"`)
			http.Error(w, "a valid bearer token is required (admin.token_file)", http.StatusUnauthorized)
			return
		}
		b, ok := st.(backupStore)
		if !ok {
			http.Error(w, "this store cannot be backed up by shardgate: back up its database with the database's own tools",
				http.StatusNotImplemented)
			return
		}
		serveBackup(w, b, log)
	})
}

func serveBackup(w http.ResponseWriter, b backupStore, log *logrus.Entry) {
	start := time.Now()
	cw := &countingWriter{w: w}
	n, err := b.BackupSized(cw, func(size int64) {
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", strconv.FormatInt(size, 10))
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="shardgate-%s.db"`, start.UTC().Format("20060102T150405Z")))
		h.Set("Cache-Control", "no-store")
	})
	if err != nil {
		log.WithError(err).WithField("bytes", n).Error("store backup failed")
		if cw.n == 0 {
			// Nothing sent yet: the status can still say so.
			w.Header().Del("Content-Length")
			w.Header().Del("Content-Disposition")
			http.Error(w, "backup failed: "+err.Error(), http.StatusInternalServerError)
		}
		// Otherwise the body falls short of its Content-Length and the
		// client sees the cut.
		return
	}
	log.WithFields(logrus.Fields{"bytes": n, "duration_ms": time.Since(start).Milliseconds()}).Info("store backup served")
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// AdminHandler is the admin listener's surface: /metrics of reg, /healthz and
// GET /admin/backup of st with token.
func AdminHandler(reg prometheus.Gatherer, st store.Store, token serverconfig.Secret, log *logrus.Entry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.Handle(BackupPath, BackupHandler(st, token, log))
	return mux
}

// StartAdmin binds addr and serves h on it until stop is called, returning
// the bound address (Start); stop gives a download in progress
// adminShutdownGrace, then cuts it.
func StartAdmin(addr string, h http.Handler, log *logrus.Entry) (bound string, stop func(), err error) {
	return Start("admin listener", addr, &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, adminShutdownGrace, log)
}

// Start binds addr and serves srv on it until stop is called, returning the
// bound address. A bind failure is returned at once, so that a wrong address
// stops the start rather than going unnoticed. stop gives requests in
// progress grace, then cuts them. name says which listener in logs and errors.
func Start(name, addr string, srv *http.Server, grace time.Duration, log *logrus.Entry) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.WithError(err).Error(name + " stopped")
		}
	}()
	bound = ln.Addr().String()
	log.WithFields(logrus.Fields{"listener": name, "listen": bound}).Info("shardgate " + name + " serving")
	return bound, func() {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.WithError(err).Warn(name + ": requests outlived the shutdown grace and were cut")
			if err := srv.Close(); err != nil {
				log.WithError(err).Warn("close the " + name)
			}
		}
	}, nil
}

const adminShutdownGrace = 10 * time.Second
