//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// A plan file cut short while it is mapped faults where the parse reads past its
// new end: a bad-input error, not a crash.
func TestReadPlanMappedFileTruncated(t *testing.T) {
	raw := taintedReplacePlan(2 * dropChunk)
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, passed, unmap, err := mapFile(f)
	require.NoError(t, err)
	require.Len(t, b, len(raw))
	defer unmap()
	require.NoError(t, os.Truncate(path, 0))

	cs, err := parseMapped(path, b, planparse.Hints{Done: passed, ReadAhead: dropAhead(b)})
	require.ErrorIs(t, err, errPlanChanged)
	require.Nil(t, cs)
}

// What is not a regular file is not mapped.
func TestMapFileSkipsNonRegularFiles(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	b, _, _, err := mapFile(r)
	require.NoError(t, err)
	require.Nil(t, b)
}

// The parse says which ranges it is done with in any order (its walk and its
// workers): a chunk of the mapped plan leaves the process once every byte of it
// has been said, and not before.
func TestMapFileDropsAChunkOnceAllOfItIsDone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte(" "), 2*dropChunk+4096), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, done, unmap, err := mapFile(f)
	require.NoError(t, err)
	defer unmap()
	sum := 0
	for i := 0; i < len(b); i += 4096 {
		sum += int(b[i]) // every page resident
	}
	require.Positive(t, sum)
	full := mappedKiB(t, b)
	require.GreaterOrEqual(t, full, 2*dropChunk/1024)

	done(dropChunk/2, dropChunk-100) // most of the first chunk, out of order
	done(0, 1000)
	done(dropChunk-100, dropChunk+5) // and into the second
	require.Equal(t, full, mappedKiB(t, b), "a chunk was dropped with bytes of it not done")
	done(1000, dropChunk/2)
	require.InDelta(t, full-dropChunk/1024, mappedKiB(t, b), 8, "the first chunk, all done, is still resident")
}

// The worker looking for resource_changes reads every byte before it at once:
// those pages leave the process at once too (the walk reads them again from the
// file), all but the pages the range only partly covers.
func TestDropAheadDropsTheWholePagesOfTheRange(t *testing.T) {
	page := os.Getpagesize()
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte(" "), 64*page), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, _, unmap, err := mapFile(f)
	require.NoError(t, err)
	defer unmap()
	sum := 0
	for i := 0; i < len(b); i += page {
		sum += int(b[i]) // every page resident
	}
	require.Positive(t, sum)
	require.Equal(t, 64*page/1024, mappedKiB(t, b))

	dropAhead(b)(10, 60*page+10) // pages 1 to 59 whole; 0 and 60 in part
	require.Equal(t, 5*page/1024, mappedKiB(t, b))
	require.Equal(t, byte(' '), b[30*page], "a dropped page reads again from the file")
}

// mappedKiB is the resident size of the mapping that starts at b, from smaps.
func mappedKiB(t *testing.T, b []byte) int {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/smaps")
	if os.IsNotExist(err) {
		t.Skip("no /proc/self/smaps on this system")
	}
	require.NoError(t, err)
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&b[0])))
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			in = strings.HasPrefix(line, start) // a mapping's first line
		}
		if in && strings.HasPrefix(line, "Rss:") {
			var kb int
			_, err := fmt.Sscanf(strings.TrimPrefix(line, "Rss:"), "%d", &kb)
			require.NoError(t, err)
			return kb
		}
	}
	t.Fatalf("no mapping at %s in smaps", start)
	return 0
}
