package serverconfig

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// TLSConfig serves the webhook listener over HTTPS with a certificate and key
// from files, reloaded on SIGHUP (a renewed certificate needs no restart).
type TLSConfig struct {
	CertFile, KeyFile string
}

type rawTLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// listenTLS validates listen_tls: both files given and a loadable pair.
func (v *validator) listenTLS(r *rawTLS) *TLSConfig {
	if r == nil {
		return nil
	}
	if r.CertFile == "" || r.KeyFile == "" {
		v.addf("listen_tls needs both cert_file and key_file")
		return nil
	}
	if _, err := tls.LoadX509KeyPair(r.CertFile, r.KeyFile); err != nil {
		v.addf("listen_tls: cannot load the certificate %s with the key %s: %s", r.CertFile, r.KeyFile, oneLine(err.Error()))
	}
	return &TLSConfig{CertFile: r.CertFile, KeyFile: r.KeyFile}
}

// validListen checks host:port with a port shardgate can bind (0-65535).
func validListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen %q is not host:port", addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("listen %q: port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}

// oneLine is the first line of s, for a problem quoting an error.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
