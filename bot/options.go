package bot

import (
	"net"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"
)

// Option adjusts a Server, mostly for tests.
type Option func(*Server)

// WithClock replaces time.Now.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithLogEntry sets the logger.
func WithLogEntry(l *logrus.Entry) Option { return func(s *Server) { s.log = l } }

// WithOnListening calls f with the webhook listener's address once Run has
// bound it, before it serves: the place to announce the service.
func WithOnListening(f func(addr net.Addr)) Option { return func(s *Server) { s.onListening = f } }

// WithGitHubTransport sets the transport under GitHub App authentication
// (default: ghapp.NewRetryTransport over http.DefaultTransport). Redaction is put
// above it.
func WithGitHubTransport(rt http.RoundTripper) Option { return func(s *Server) { s.ghTransport = rt } }
