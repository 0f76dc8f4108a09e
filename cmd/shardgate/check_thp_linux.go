package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on amd64 and arm64 (4 KiB
// base pages).
const hugePage = 2 << 20

// adviseHugeHeap asks the kernel to back the next size bytes of the heap with
// transparent huge pages (madvise MADV_HUGEPAGE), where the machine's setting
// is "madvise", as Debian's is and as the Go runtime leaves it: Go does not
// advise its heap.
//
// A check is a short process that writes a heap of tens of megabytes once, and
// on 4 KiB pages every page of it is a fault: 7,800 faults on a 10,000-instance
// plan of one stream per instance, 70 of its 270 ms of CPU in the kernel, on
// the 2-core virtual machine of docs/performance.md. On 2 MiB pages, 1,500
// faults: 0.16 s -> 0.12 s wall, and 0.65 s -> 0.49 s at 50,000 instances
// (issue 37).
//
// Go maps heap address space only as the heap grows, and advice on an address
// range holds only for what is mapped there when it is given. So the heap is
// grown by size bytes first, with an allocation that is never written (fresh
// memory from the kernel needs no zeroing, so no page of it is touched), that
// range is advised, and the allocation is handed back (debug.FreeOSMemory: a
// collection of the few megabytes the process holds at start, and the range
// returned to the kernel, so nothing is counted against the memory limit). The
// page allocator hands out the lowest free addresses first: the heap the check
// goes on to write is that range.
//
// GODEBUG=disablethp=1, Go's own switch against huge pages on the heap, turns
// this off. The peak memory is at most a huge page per region of the heap
// higher (docs/performance.md measures it against its budget).
func adviseHugeHeap(size int64) {
	if size < hugePage || thpDisabled(os.Getenv("GODEBUG")) {
		return
	}
	b := make([]byte, size)
	// From the huge page b starts in: the start of the heap below b is freed
	// with it, and the heap is written from there on.
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := base &^ (hugePage - 1)
	end := (base + uintptr(len(b))) &^ (hugePage - 1)
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_HUGEPAGE) // best effort: a kernel without THP says no
	runtime.KeepAlive(b)
	debug.FreeOSMemory() // b is not used past the advice: this frees it
}

// thpDisabled reports whether GODEBUG holds disablethp=1 (its last setting wins,
// as the runtime reads it).
func thpDisabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "disablethp" {
			off = v == "1"
		}
	}
	return off
}
