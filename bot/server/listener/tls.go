package listener

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
)

// certReloader holds the serving certificate and loads it again on demand.
type certReloader struct {
	cfg  serverconfig.TLSConfig
	mu   sync.RWMutex
	cert *tls.Certificate
}

func newCertReloader(cfg serverconfig.TLSConfig) (*certReloader, error) {
	r := &certReloader{cfg: cfg}
	return r, r.reload()
}

// reload reads the files again; on an error the certificate in use stays.
func (r *certReloader) reload() error {
	c, err := tls.LoadX509KeyPair(r.cfg.CertFile, r.cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("load certificate %s: %w", r.cfg.CertFile, err)
	}
	r.mu.Lock()
	r.cert = &c
	r.mu.Unlock()
	return nil
}

func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cert, nil
}

// Listen binds addr before anything says shardgate is serving (a port in use
// is an error, not a log line after "serving"), calls onListening (when not
// nil) with the bound address, and returns the function that serves srv on it:
// with tlsCfg, HTTPS with the certificate reloaded on SIGHUP until ctx ends.
func Listen(ctx context.Context, addr string, tlsCfg *serverconfig.TLSConfig, srv *http.Server, log *logrus.Entry, onListening func(net.Addr)) (serve func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	llog := log.WithFields(logrus.Fields{"listener": "webhook listener", "listen": ln.Addr().String()})
	if onListening != nil {
		onListening(ln.Addr())
	}
	if tlsCfg == nil {
		llog.Info("shardgate webhook listener serving (plain HTTP: put TLS in front of it, or set listen_tls)")
		return func() error { return srv.Serve(ln) }, nil
	}
	certs, err := newCertReloader(*tlsCfg)
	if err != nil {
		if cerr := ln.Close(); cerr != nil {
			log.WithError(cerr).Warn("close the listener")
		}
		return nil, fmt.Errorf("serve: %w", err)
	}
	srv.TLSConfig = &tls.Config{GetCertificate: certs.get, MinVersion: tls.VersionTLS12}
	// Notified before serving: a SIGHUP from then on reloads, never kills.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go reloadOnHangup(ctx, hup, certs, log)
	llog.Info("shardgate webhook listener serving HTTPS")
	return func() error { return srv.ServeTLS(ln, "", "") }, nil
}

// reloadOnHangup loads the certificate again on every SIGHUP until ctx ends.
func reloadOnHangup(ctx context.Context, hup chan os.Signal, certs *certReloader, log *logrus.Entry) {
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := certs.reload(); err != nil {
				log.WithError(err).Error("SIGHUP: the certificate was not reloaded; the one in use stays")
				continue
			}
			log.Info("SIGHUP: certificate reloaded")
		}
	}
}
