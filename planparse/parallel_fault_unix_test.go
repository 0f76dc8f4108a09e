//go:build unix

package planparse

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// A worker that faults reading a mapped plan cut short under it fails its piece
// and goes on to the next; the process does not crash, and the walk is never
// left waiting for a worker that died.
func TestParallelWorkerFaultFailsTheBatch(t *testing.T) {
	raw := planparsetest.GeneratePlan(400, 20, 5)
	page := os.Getpagesize()
	require.Greater(t, len(raw), 8*page)
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, err := unix.Mmap(int(f.Fd()), 0, len(raw), unix.PROT_READ, unix.MAP_PRIVATE)
	require.NoError(t, err)
	defer unix.Munmap(b)

	// The walk's pieces, cut before the file shrinks.
	s := newSplit(func(int, int) {}, 1)
	pieces := s.cut(raw, bytes.Index(raw, []byte(`"resource_changes":[`))+len(`"resource_changes":`))
	require.Greater(t, len(pieces), 100)
	s.setFor(&pieceSet{pieces: pieces})
	cut := len(raw) / 2 / page * page
	require.NoError(t, os.Truncate(path, int64(cut)))

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.work(b, false) }()
	wg.Wait()
	var faulted, read int
	for k, pc := range pieces {
		switch {
		case pc.err == errFault:
			faulted++
			// A piece reads until the next one's start at least.
			if k+1 < len(pieces) {
				require.GreaterOrEqual(t, pieces[k+1].at, cut, "a piece before the cut faulted")
			}
		case pc.err == nil:
			read++
		default:
			t.Fatalf("piece at %d: %v", pc.at, pc.err)
		}
	}
	require.Positive(t, faulted, "no piece lay past the cut")
	require.Positive(t, read)
}

// A walk that faults (the mapped plan cut short before the parse) panics to its
// caller, which recovers it (shardgate check), and leaves no worker behind.
func TestParallelWalkFaultLeavesNoWorker(t *testing.T) {
	raw := planparsetest.GeneratePlan(400, 20, 5)
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, err := unix.Mmap(int(f.Fd()), 0, len(raw), unix.PROT_READ, unix.MAP_PRIVATE)
	require.NoError(t, err)
	defer unix.Munmap(b)
	// Cut inside resource_changes: the walk has handed entries over, and the
	// workers are waiting for more, when it faults.
	cut := bytes.Index(raw, []byte(`"resource_changes":[`)) + len(raw)/8
	page := os.Getpagesize()
	require.NoError(t, os.Truncate(path, int64(cut/page*page)))

	before := runtime.NumGoroutine()
	faulted := func() (fault bool) {
		// Batches of one entry each, so several are handed over before the fault.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			_, fault = recover().(interface{ Addr() uintptr })
		}()
		_, _ = parseParallel(b, 4, 1, Hints{})
		return false
	}()
	require.True(t, faulted, "the walk read a truncated mapping without faulting")
	// The walk waited for its workers; each has at most its return left to run.
	for i := 0; i < 100000 && runtime.NumGoroutine() > before; i++ {
		runtime.Gosched()
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "workers left running")
}
