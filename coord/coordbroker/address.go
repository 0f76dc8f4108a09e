package coordbroker

import (
	"context"
	"net"
	"slices"
	"strings"
	"time"
)

// upstreamFor returns the configured coordinator serving scheme://hostport
// and the request path, the longest configured path prefix winning.
func (b *Broker) upstreamFor(scheme, hostport, path string) (*upstream, bool) {
	var best *upstream
	for i := range b.upstreams {
		up := &b.upstreams[i]
		if up.scheme != scheme || up.hostport != hostport {
			continue
		}
		if up.basePath != "" && path != up.basePath && !strings.HasPrefix(path, up.basePath+"/") {
			continue
		}
		if best == nil || len(up.basePath) > len(best.basePath) {
			best = up
		}
	}
	return best, best != nil
}

// resolveTarget names what a request to scheme://hostport reaches: a
// configured coordinator (target is then its configured host:port), by its
// spelling or by its address under any other name, or a host of the egress
// list. why, when not empty, is why the broker refuses it.
func (b *Broker) resolveTarget(ctx context.Context, scheme, hostport string) (target string, coordinator bool, why string) {
	for _, up := range b.upstreams {
		if up.hostport == hostport {
			return b.asCoordinator(up, scheme)
		}
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", false, "not host:port"
	}
	ips := lookup(ctx, host)
	for _, up := range b.upstreams {
		if up.port != port {
			continue
		}
		for _, ip := range ips {
			if slices.ContainsFunc(up.addrs, ip.Equal) {
				return b.asCoordinator(up, scheme)
			}
		}
	}
	if why := b.egressRefusal(hostport); why != "" {
		return "", false, why
	}
	return hostport, false, ""
}

// asCoordinator is resolveTarget's answer for a request that reached up: a
// coordinator is called only with its configured scheme.
func (b *Broker) asCoordinator(up upstream, scheme string) (string, bool, string) {
	if up.scheme != scheme {
		return "", false, "it is the coordinator " + up.origin + ", reached only as configured"
	}
	return up.hostport, true, ""
}

// lookup resolves host (an address is itself); nil when it does not resolve.
func lookup(ctx context.Context, host string) []net.IP {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil
	}
	out := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.IP)
	}
	return out
}

// isCoordinatorAddress says whether ip:port is a configured coordinator's.
func (b *Broker) isCoordinatorAddress(ip net.IP, port string) bool {
	for _, up := range b.upstreams {
		if up.port == port && slices.ContainsFunc(up.addrs, ip.Equal) {
			return true
		}
	}
	return false
}
