package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/shardgate/shardgate/planparse"
)

// zipMagic starts a saved binary plan file (a zip archive).
var zipMagic = []byte("PK\x03\x04")

// readPlan parses plan JSON from a file ("-" for stdin). A regular file is
// memory-mapped where the system allows it (mapFile), so the plan is never copied
// into the heap, and the process holds only the pages the parse is reading. A
// pipe is read whole, once.
func readPlan(path string, stdin io.Reader) (*planparse.ChangeSet, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open plan: %w", err)
		}
		defer f.Close()
		r = f
	}
	if f, ok := r.(*os.File); ok {
		if b, done, unmap, err := mapFile(f); err != nil {
			return nil, fmt.Errorf("read plan: %w", err)
		} else if b != nil {
			defer unmap()
			return parseMapped(path, b, planparse.Hints{Done: done, ReadAhead: dropAhead(b)})
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	return parsePlan(path, b, planparse.Hints{})
}

// errPlanChanged is a mapped plan file cut short while it was read.
var errPlanChanged = errors.New("read plan: the file was truncated while it was read")

// parseMapped is parsePlan over a mapped file. Should the file shrink under the
// mapping, reading past its new end faults; SetPanicOnFault turns that into a
// panic recovered here, so the command exits 2 with a reason, never crashes.
// The parse's workers read on goroutines of their own, where planparse turns
// such a fault into a failed batch and parses again here, meeting it.
func parseMapped(path string, b []byte, hints planparse.Hints) (cs *planparse.ChangeSet, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			cs, err = nil, errPlanChanged
		}
	}()
	return parsePlan(path, b, hints)
}

// parsePlan parses the plan JSON b read from path, its resource_changes entries
// on every core the process may use, telling hints of what it reads.
func parsePlan(path string, b []byte, hints planparse.Hints) (*planparse.ChangeSet, error) {
	if bytes.HasPrefix(b, zipMagic) {
		return nil, fmt.Errorf("%s is a saved binary plan: run 'terraform show -json %s > plan.json' first, or use 'shardgate plan'", path, path)
	}
	cs, err := planparse.ParseBytesParallelHints(b, runtime.GOMAXPROCS(0), hints)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}
