//go:build unix

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dropChunk is the unit the parse's pages are dropped in: a chunk of the file
// whose every byte the parse is done with is dropped, one madvise call each.
// At 4 MiB, a 10,000-instance plan of one stream per instance peaked at 69.3
// MiB (the walk and the workers each holding chunks they are partly done
// with), over its budget of the plan plus the idle peak; at 2 MiB, 67.6. Not
// less: a file mapping may be backed by 2 MiB pages, and dropping part of one
// unmaps all of it, pages the parse is still reading (issue 37).
const dropChunk = 2 << 20

// mapFile maps f read-only when it is a non-empty regular file, and returns its
// bytes, a hint that a range of them is done with (ParseBytesParallel's done),
// and how to unmap them; nil bytes (and no error) when f is something else, a
// pipe or a terminal, to be read instead.
//
// The hint drops the pages behind the parse from the process (MADV_DONTNEED): the
// mapping is private and never written, so a page read again is read again from
// the file. So the process never holds the whole plan, only the parts being
// read. The parse reads several parts at once (its walk and its workers) and says
// which ranges it is done with in any order, each byte once: a chunk of
// dropChunk bytes is dropped when all of its bytes have been said.
func mapFile(f *os.File) (b []byte, done func(lo, hi int), unmap func(), err error) {
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
	left := make([]int, (len(b)+dropChunk-1)/dropChunk) // bytes not yet done, by chunk
	for k := range left {
		left[k] = min(len(b), (k+1)*dropChunk) - k*dropChunk
	}
	done = func(lo, hi int) {
		for lo < hi && lo >= 0 && hi <= len(b) {
			k := lo / dropChunk
			end := min(hi, (k+1)*dropChunk)
			if left[k] -= end - lo; left[k] == 0 {
				_ = unix.Madvise(b[k*dropChunk:min(len(b), (k+1)*dropChunk)], unix.MADV_DONTNEED)
			}
			lo = end
		}
	}
	return b, done, func() { _ = unix.Munmap(b) }, nil
}

// dropAhead is planparse's ReadAhead hint for a mapping b from mapFile: the
// pages wholly inside b[lo:hi] are dropped now, the parse's walk reading them
// again from the file when it gets there. On a 10,000-instance plan the
// worker looking for resource_changes reads planned_values (8 of 28 MB) at
// once, and those pages were held until the walk was done with them.
func dropAhead(b []byte) func(lo, hi int) {
	return func(lo, hi int) {
		page := os.Getpagesize()
		lo = (lo + page - 1) / page * page
		hi = hi / page * page
		if lo < hi && hi <= len(b) {
			_ = unix.Madvise(b[lo:hi], unix.MADV_DONTNEED)
		}
	}
}
