package bot

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

	"github.com/shardgate/shardgate/serverconfig"
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

// listen binds the listener before anything says shardgate is serving (a port
// in use is an error, not a log line after "serving"), and with listen_tls
// serves HTTPS with the certificate reloaded on SIGHUP.
func (s *Server) listen(ctx context.Context, srv *http.Server) (func() error, error) {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	log := s.log.WithField("listen", ln.Addr().String())
	if s.onListening != nil {
		s.onListening(ln.Addr())
	}
	if s.cfg.ListenTLS == nil {
		log.Info("shardgate serving (plain HTTP: put TLS in front of it, or set listen_tls)")
		return func() error { return srv.Serve(ln) }, nil
	}
	certs, err := newCertReloader(*s.cfg.ListenTLS)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	srv.TLSConfig = &tls.Config{GetCertificate: certs.get, MinVersion: tls.VersionTLS12}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := certs.reload(); err != nil {
					s.log.WithError(err).Error("SIGHUP: the certificate was not reloaded; the one in use stays")
					continue
				}
				s.log.Info("SIGHUP: certificate reloaded")
			}
		}
	}()
	log.Info("shardgate serving HTTPS")
	return func() error { return srv.ServeTLS(ln, "", "") }, nil
}
