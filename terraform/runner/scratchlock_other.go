//go:build !unix

package runner

import "os"

// Without flock a live job's scratch cannot be told from a dead one's: the
// lock file exists but is never free, so nothing is swept.
func holdScratch(path string) (func(), error) {
	return func() {}, os.WriteFile(path, nil, 0o600)
}

func scratchFree(string) bool { return false }
