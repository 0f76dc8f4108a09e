package coordbroker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultEgress is terraform.egress when unset: the public Terraform and
// OpenTofu registries and the hosts their providers download from, so that
// providers install as without the broker.
var DefaultEgress = []string{
	"registry.terraform.io:443", "releases.hashicorp.com:443",
	"registry.opentofu.org:443", "github.com:443",
	"objects.githubusercontent.com:443", "release-assets.githubusercontent.com:443",
}

// egressRule is one entry of the egress list: host:port, or *.suffix:port
// for every name below suffix.
type egressRule struct {
	host    string // lower case; ".suffix" for a wildcard
	port    string
	wild    bool
	literal net.IP // set when host is an IP address
}

// CheckEgress checks egress entries (host:port or *.suffix:port); the
// error names the first bad one.
func CheckEgress(entries []string) error {
	_, err := parseEgress(entries)
	return err
}

func parseEgress(entries []string) ([]egressRule, error) {
	var out []egressRule
	for _, e := range entries {
		host, port, err := net.SplitHostPort(e)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%q is not host:port or *.suffix:port", e)
		}
		r := egressRule{host: strings.ToLower(strings.TrimSuffix(host, ".")), port: strconv.Itoa(n)}
		if suffix, ok := strings.CutPrefix(r.host, "*."); ok {
			if suffix == "" || strings.ContainsAny(suffix, "*") {
				return nil, fmt.Errorf("%q is not host:port or *.suffix:port", e)
			}
			r.host, r.wild = "."+suffix, true
		} else if strings.Contains(r.host, "*") {
			return nil, fmt.Errorf("%q: a wildcard may only start the name, as in *.example.com:443", e)
		}
		r.literal = net.ParseIP(r.host)
		out = append(out, r)
	}
	return out, nil
}

// egressAllowed says whether hostport (lower case, port written) is on the
// egress list.
func (b *Broker) egressAllowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	host = strings.TrimSuffix(host, ".")
	for _, r := range b.egress {
		if r.port != port {
			continue
		}
		if r.wild && strings.HasSuffix(host, r.host) || !r.wild && host == r.host {
			return true
		}
	}
	return false
}

// listedAddress says whether ip:port is on the egress list as an address.
func (b *Broker) listedAddress(ip net.IP, port string) bool {
	return slices.ContainsFunc(b.egress, func(r egressRule) bool { return r.literal != nil && r.literal.Equal(ip) && r.port == port })
}

// guardedDialer dials the egress: a name on the list that resolves to a
// loopback, link-local, unspecified or multicast address, or to one of this
// host's own, is refused unless the list names that address itself.
func (b *Broker) guardedDialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("shardgate broker: %s is no address", address)
		}
		if b.isCoordinatorAddress(ip, port) {
			return egressDenied(address + " is a configured coordinator's address, reached only as configured")
		}
		if reason := forbiddenAddress(ip); reason != "" && !b.listedAddress(ip, port) {
			return egressDenied(address + " is " + reason + "; list it in terraform.egress to allow it")
		}
		return nil
	}}
}

// egressDenied is the guarded dialer's refusal of an address.
type egressDenied string

func (e egressDenied) Error() string { return string(e) }

// deniedBy returns the guarded dialer's refusal inside err, if any.
func deniedBy(err error) (string, bool) {
	var d egressDenied
	if errors.As(err, &d) {
		return string(d), true
	}
	return "", false
}

// forbiddenAddress names why ip is never reached through a listed name.
func forbiddenAddress(ip net.IP) string {
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "a link-local address"
	case ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		return "not a host address"
	case ownAddress(ip):
		return "an address of this host"
	}
	return ""
}

// ownAddress says whether ip is one of this host's interface addresses.
func ownAddress(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // unknown: never reach it
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// denyEgress refuses a request or CONNECT to a host off the list, with the
// reason in the answer and the job's output.
func (b *Broker) denyEgress(w http.ResponseWriter, method, hostport, why string) {
	msg := fmt.Sprintf("shardgate broker: refused %s %s: %s", clip(method, 16), clip(hostport, 200), why)
	b.noteDenied(msg)
	http.Error(w, msg, http.StatusForbidden)
}

// egressRefusal is why hostport (not a configured coordinator) is refused,
// or "" when it is on the list.
func (b *Broker) egressRefusal(hostport string) string {
	if b.egressAllowed(hostport) {
		return ""
	}
	return "not in terraform.egress (only the configured coordinators and the listed hosts are reached)"
}

// dialEgress connects a tunnel to a listed host through the guarded dialer.
func (b *Broker) dialEgress(ctx context.Context, hostport string) (net.Conn, error) {
	return b.guardedDialer().DialContext(ctx, "tcp", hostport)
}
