package bot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
)

// fifoGates are named pipes that projects' plans read (file() in an
// output): a plan's read waits until the test writes, so the test sees
// which plans are running at once without reading a clock.
type fifoGates struct {
	paths []string
	held  []*os.File // the write end of a gate whose reader is waiting
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// newFifoGates makes a gate per name in dir; they open when the test ends
// at the latest.
func newFifoGates(t *testing.T, dir string, names ...string) *fifoGates {
	t.Helper()
	g := &fifoGates{done: make(chan struct{})}
	for _, n := range names {
		p := filepath.Join(dir, n+".fifo")
		require.NoError(t, syscall.Mkfifo(p, 0o600))
		g.paths = append(g.paths, p)
		g.held = append(g.held, nil)
	}
	t.Cleanup(g.close)
	return g
}

// output is a project's output that reads gate i.
func (g *fifoGates) output(i int) string {
	return fmt.Sprintf("\noutput \"gate\" {\n  value = file(%q)\n}\n", g.paths[i])
}

// waiting says whether a plan is reading gate i: the gate's write end
// opens only when it has a reader, and the test keeps it open, unwritten,
// so that the reader goes on waiting.
func (g *fifoGates) waiting(i int) bool {
	if g.held[i] != nil {
		return true
	}
	f, err := os.OpenFile(g.paths[i], os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false // ENXIO: no reader yet
	}
	g.held[i] = f
	return true
}

// open lets the waiting readers go and answers every later read at once.
func (g *fifoGates) open() {
	g.once.Do(func() {
		for i, p := range g.paths {
			if f := g.held[i]; f != nil {
				_, _ = f.WriteString("x")
				_ = f.Close()
			}
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				for {
					select {
					case <-g.done:
						return
					default:
					}
					f, err := os.OpenFile(p, os.O_WRONLY, 0) // waits for a reader
					if err != nil {
						return
					}
					_, _ = f.WriteString("x")
					_ = f.Close()
				}
			}()
		}
	})
}

// close opens the gates and stops answering: a reader of each unblocks its
// writer, which then sees done.
func (g *fifoGates) close() {
	g.open()
	close(g.done)
	var readers []*os.File
	for _, p := range g.paths {
		if f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			readers = append(readers, f)
		} else if !errors.Is(err, os.ErrNotExist) {
			panic(err)
		}
	}
	g.wg.Wait()
	for _, f := range readers {
		_ = f.Close()
	}
}

// A merge group's projects are planned at once, over queue.workers, not one
// after another: each of two projects reads a gate in its plan, and the
// test opens neither until both plans are waiting at their gates. Planned
// one after another, the first would wait for ever and the second never
// start.
func TestMergeGroupPlansItsProjectsConcurrently(t *testing.T) {
	h := newHarnessBase(t)
	names := writeMonorepo(h, 2)
	gates := newFifoGates(t, filepath.Dir(h.state), names...)
	for i, n := range names {
		main := "projects/" + n + "/main.tf"
		was, err := os.ReadFile(filepath.Join(h.repo.Dir(), main))
		require.NoError(t, err)
		h.repo.WriteFile(main, string(was)+gates.output(i))
	}
	h.repo.Commit("each project's plan reads its gate")
	h.start()
	t.Cleanup(gates.open) // before the server stops
	pr := openSharedModulePR(h, "shared-v2")

	g, body := h.groupCheckRequested(nil, pr)
	code, r := h.deliver("merge_group", body)
	require.Equal(t, 202, code, r.Reason)
	if !assert.Eventually(t, func() bool { return gates.waiting(0) && gates.waiting(1) }, 2*time.Minute, 20*time.Millisecond) {
		t.Fatalf("the plans never waited at both gates at once: %s's waiting %v, %s's %v", names[0], gates.waiting(0), names[1], gates.waiting(1))
	}
	gates.open()
	h.waitJob(r.JobID)

	gate := h.check(prreport.CheckGateName, g.HeadSHA)
	require.Equal(t, "success", gate.Conclusion, gate.Summary)
	for _, n := range names {
		require.Equal(t, "success", h.check(prreport.CheckPlanPrefix+n, g.HeadSHA).Conclusion)
	}
}
