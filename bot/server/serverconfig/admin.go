package serverconfig

import (
	"net"
	"strconv"
)

// MinAdminTokenLength is the shortest admin token accepted: the backup
// endpoint hands out the whole store.
const MinAdminTokenLength = 16

// AdminConfig is the optional admin listener (admin.*): /metrics, /healthz and
// GET /admin/backup. It is off unless Listen is set, and meant for loopback or
// a private network, never for the address GitHub reaches.
type AdminConfig struct {
	Listen string
	// Token is the bearer token GET /admin/backup requires.
	Token Secret
}

// Enabled says whether the admin listener runs.
func (a AdminConfig) Enabled() bool { return a.Listen != "" }

type rawAdmin struct {
	Listen    string `yaml:"listen"`
	TokenFile string `yaml:"token_file"`
}

func (v *validator) admin(r rawAdmin, mainListen string) AdminConfig {
	a := AdminConfig{Listen: r.Listen}
	switch {
	case r.Listen == "" && r.TokenFile != "":
		v.addf("admin.token_file is set but admin.listen is not: set admin.listen (for example 127.0.0.1:9091) to serve the admin endpoints")
	case r.Listen == "":
		return a
	case r.TokenFile == "":
		v.addf("admin.listen needs admin.token_file: GET /admin/backup hands out the whole store and requires a bearer token")
	}
	if r.Listen != "" {
		if !validHostPort(r.Listen) {
			v.addf("admin.listen %q is not host:port with a port from 0 to 65535", r.Listen)
		} else if r.Listen == mainListen {
			v.addf("admin.listen %q is the same address as listen: the admin endpoints must not be served where GitHub's webhooks arrive", r.Listen)
		}
	}
	if r.TokenFile != "" {
		a.Token = v.secretFile("admin.token_file", r.TokenFile)
		if n := len(a.Token.Reveal()); n > 0 && n < MinAdminTokenLength {
			v.addf("admin.token_file: the token is %d characters; use at least %d (for example: openssl rand -hex 32)", n, MinAdminTokenLength)
		}
	}
	return a
}

// validHostPort accepts host:port with a numeric port in range; the host may
// be empty (every interface).
func validHostPort(s string) bool {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	p, err := strconv.Atoi(port)
	return err == nil && p >= 0 && p <= 65535
}
