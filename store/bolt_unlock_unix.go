//go:build unix

package store

import (
	"os"
	"syscall"
)

// unlockFile drops the flock bbolt took on f. Closing f is not enough after
// bbolt panicked in Open: its memory map keeps the open file, and with it the
// lock, alive.
func unlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
