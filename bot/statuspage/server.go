package statuspage

import (
	"net/http"
	"time"
)

// Timeouts of the status page's listener. It sets no write timeout: a log
// stream lasts as long as its job. Each page and each event sets its own
// write deadline instead (pageWriteTimeout, sseWriteTimeout).
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	IdleTimeout       = 2 * time.Minute
	MaxHeaderBytes    = 16 << 10
)

// NewServer returns the status page's http.Server on addr.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		IdleTimeout: IdleTimeout, MaxHeaderBytes: MaxHeaderBytes}
}
