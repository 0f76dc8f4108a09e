// Package canarytest is a TCP listener that counts the connections it
// accepts, for tests that check that nothing reached an address (tests only).
package canarytest

import (
	"net"
	"sync/atomic"
	"testing"
)

// Listen listens on ip (port chosen by the kernel) until the test ends and
// returns its address and the count of connections it accepted, each closed
// at once.
func Listen(t testing.TB, ip string) (addr string, heard *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("canary: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	heard = &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			heard.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), heard
}
