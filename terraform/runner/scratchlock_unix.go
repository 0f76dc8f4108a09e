//go:build unix

package runner

import (
	"fmt"
	"os"
	"syscall"
)

// holdScratch creates and flocks a scratch dir's lock file for the job's
// lifetime; the kernel releases it when the process dies, however it dies.
func holdScratch(path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("flock: %w", err)
	}
	return func() { _ = f.Close() }, nil
}

// scratchFree says whether nobody holds the lock at path.
func scratchFree(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
