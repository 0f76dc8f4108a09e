package coordbroker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// jobCA is the per-job CA the broker signs coordinator leaf certificates
// with. Its key lives only in this process's memory; the sandbox trusts its
// certificate through a bundle in the job's scratch directory.
type jobCA struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// caLifetime covers the longest job; the CA dies with the broker anyway.
const caLifetime = 48 * time.Hour

func newJobCA() (*jobCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make the job CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "shardgate coordinator broker (one job)"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("make the job CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("read the job CA: %w", err)
	}
	return &jobCA{cert: cert, der: der, key: key, leaves: map[string]*tls.Certificate{}}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// leaf returns the certificate the broker presents for host.
func (ca *jobCA) leaf(host string) (*tls.Certificate, error) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if c, ok := ca.leaves[host]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make a leaf key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    ca.cert.NotBefore,
		NotAfter:     ca.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign a leaf for %s: %w", host, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der, ca.der}, PrivateKey: key}
	ca.leaves[host] = c
	return c, nil
}

// systemBundles are where Linux distributions keep the system's roots (Go's
// crypto/x509 reads the same list); the first that exists is copied.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// WriteCABundle writes the system's roots plus the job CA's certificate to
// dir/coordinator-broker-ca.pem (dir is the job's scratch directory, removed
// with it) and returns its path, for SSL_CERT_FILE and CURL_CA_BUNDLE.
func (b *Broker) WriteCABundle(dir string) (string, error) {
	var bundle []byte
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		bundle, _ = os.ReadFile(f)
	}
	for _, f := range systemBundles {
		if len(bundle) > 0 {
			break
		}
		bundle, _ = os.ReadFile(f)
	}
	if len(bundle) > 0 && bundle[len(bundle)-1] != '\n' {
		bundle = append(bundle, '\n')
	}
	bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.ca.der})...)
	path := filepath.Join(dir, "coordinator-broker-ca.pem")
	if err := os.WriteFile(path, bundle, 0o644); err != nil {
		return "", fmt.Errorf("write the broker's CA bundle: %w", err)
	}
	return path, nil
}

// CACertificate is the job CA's certificate (tests trust it directly).
func (b *Broker) CACertificate() *x509.Certificate { return b.ca.cert }
