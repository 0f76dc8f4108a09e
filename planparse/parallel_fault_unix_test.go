//go:build unix

package planparse

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// A worker that faults reading a mapped plan cut short under it fails its batch
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

	// The walk's batches, made before the file shrinks.
	s := &rcSplit{work: make(chan *rcBatch, 1024), batchBytes: 1, report: func(int, int) {}}
	p := parser{cs: newChangeSet(), split: s, passed: s.passed}
	require.NoError(t, p.planBytes(raw, skipSpace(raw, 0)))
	close(s.work)
	require.Greater(t, len(s.batches), 100)
	require.NoError(t, os.Truncate(path, int64(len(raw)/2/page*page)))

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.read(b, true) }()
	wg.Wait()
	var faulted, read int
	for _, bt := range s.batches {
		switch {
		case bt.err == errFault:
			faulted++
			require.Greater(t, bt.hi, len(raw)/2/page*page, "a batch before the cut faulted")
		case bt.err == nil:
			read++
		default:
			t.Fatalf("batch at %d: %v", bt.lo, bt.err)
		}
	}
	require.Positive(t, faulted, "no batch lay past the cut")
	require.Positive(t, read)
}
