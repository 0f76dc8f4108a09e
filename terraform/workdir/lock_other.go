//go:build !unix

package workdir

import (
	"fmt"
	"os"
)

// tryLockDir cannot lock without flock: a run directory is always taken for
// a live process's, so starts never remove another process's directories
// (their own is removed when they close).
func tryLockDir(path string) (unlock func(), held bool, err error) {
	if _, err := os.Stat(path); err == nil {
		return nil, false, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("open run dir lock: %w", err)
	}
	// The lock file is never written: a close error loses nothing.
	return func() { _ = f.Close() }, true, nil
}
