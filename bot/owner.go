package bot

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
)

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "shardgate"
	}
	return h
}

// processOwner names this process in job leases: host, pid and a random
// part, so that two replicas on one host, or a restart that got the pid of
// a dead process whose leases are still live, never share a name.
func processOwner() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand crashes the program rather than return an error
	return hostname() + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}
