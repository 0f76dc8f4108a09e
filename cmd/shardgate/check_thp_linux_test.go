package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// thpChildEnv makes the test binary, started by TestAdviseHugeHeap, advise a
// fresh heap and print the VmFlags of the mapping its next allocation lands in.
const thpChildEnv = "SHARDGATE_TEST_THP_CHILD"

// The advice must land on the heap the check goes on to write: a heap
// allocation made after it, larger than any hole the process had, sits in a
// mapping flagged hg (VM_HUGEPAGE). Run in a fresh process, whose heap is the
// runtime's own start.
func TestAdviseHugeHeap(t *testing.T) {
	if os.Getenv(thpChildEnv) != "" {
		adviseHugeHeap(64 << 20)
		x := make([]byte, 8<<20)
		mid := &x[len(x)/2]
		*mid = 1
		fmt.Printf("flags:%s\n", vmFlagsAt(t, uintptr(unsafe.Pointer(mid))))
		return
	}
	for _, tc := range []struct {
		godebug string
		huge    bool
	}{
		{"", true},
		{"disablethp=1", false},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestAdviseHugeHeap$", "-test.v")
		cmd.Env = append(os.Environ(), thpChildEnv+"=1", "GODEBUG="+tc.godebug)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		_, flags, ok := strings.Cut(string(out), "flags:")
		require.True(t, ok, "%s", out)
		flags, _, _ = strings.Cut(flags, "\n")
		assert.Equal(t, tc.huge, strings.Contains(" "+flags+" ", " hg "), "GODEBUG=%q: VmFlags %q", tc.godebug, flags)
	}
}

// vmFlagsAt is the VmFlags line of the mapping holding address p.
func vmFlagsAt(t *testing.T, p uintptr) string {
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(line, ":") {
			a, errA := strconv.ParseUint(lo, 16, 64)
			b, errB := strconv.ParseUint(hi, 16, 64)
			if errA == nil && errB == nil {
				in = uint64(p) >= a && uint64(p) < b
				continue
			}
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.TrimSpace(flags)
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no mapping holds %#x", p)
	return ""
}

func TestThpDisabled(t *testing.T) {
	for godebug, want := range map[string]bool{
		"":                            false,
		"disablethp=1":                true,
		"disablethp=0":                false,
		"madvdontneed=1,disablethp=1": true,
		"disablethp=1,disablethp=0":   false,
		"xdisablethp=1":               false,
	} {
		assert.Equal(t, want, thpDisabled(godebug), "GODEBUG=%q", godebug)
	}
}
