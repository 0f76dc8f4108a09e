//go:build unix

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dropChunk is how far the parse moves past the pages last dropped before the
// next are: one madvise call every few MiB.
const dropChunk = 4 << 20

// mapFile maps f read-only when it is a non-empty regular file, and returns its
// bytes, a hint that the bytes before an offset are done with (ParseBytesProgress),
// and how to unmap them; nil bytes (and no error) when f is something else, a pipe
// or a terminal, to be read instead.
//
// The hint drops the pages behind the parse from the process (MADV_DONTNEED): the
// mapping is private and never written, so a page read again is read again from
// the file. So the process never holds the whole plan, only the part being read.
func mapFile(f *os.File) (b []byte, passed func(int), unmap func(), err error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || int64(int(st.Size())) != st.Size() {
		return nil, nil, nil, nil
	}
	b, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("map %s: %w", f.Name(), err)
	}
	// The parse reads the file front to back: ask for read-ahead.
	_ = unix.Madvise(b, unix.MADV_SEQUENTIAL)
	page := os.Getpagesize()
	dropped := 0
	passed = func(n int) {
		n -= n % page
		if n-dropped < dropChunk {
			return
		}
		_ = unix.Madvise(b[dropped:n], unix.MADV_DONTNEED)
		dropped = n
	}
	return b, passed, func() { _ = unix.Munmap(b) }, nil
}
