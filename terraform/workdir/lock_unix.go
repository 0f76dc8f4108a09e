//go:build unix

package workdir

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryLockDir takes an exclusive flock on a run directory's lock file without
// waiting: held is false when a live process holds it. The lock file is
// made when missing (a directory cut short while being made); a directory
// that is gone is fs.ErrNotExist.
func tryLockDir(path string) (unlock func(), held bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("open run dir lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("lock run dir: %w", err)
	}
	// Closing the file drops the lock whatever the unlock answered, and the
	// lock file is only read: neither error loses anything.
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, true, nil
}
