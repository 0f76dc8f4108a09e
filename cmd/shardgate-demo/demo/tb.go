package demo

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// programTB is githubtest.TB for a program: errors are recorded and printed,
// cleanups run when the demo ends, temporary directories live under the
// demo's work directory.
//
// Fatalf follows testing's contract (it does not return): it records the
// message and ends the story's goroutine with runtime.Goexit, which runStory
// turns into an error. It must only be called on that goroutine, as the fake
// only calls it from the helpers the story uses.
type programTB struct {
	root string
	out  io.Writer

	mu       sync.Mutex
	errors   []string
	fatal    string
	cleanups []func()
	dirs     int
}

var _ githubtest.TB = (*programTB)(nil)

func newProgramTB(root string, out io.Writer) *programTB { return &programTB{root: root, out: out} }

func (p *programTB) Helper() {}

func (p *programTB) Logf(format string, args ...any) {}

func (p *programTB) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.mu.Lock()
	p.errors = append(p.errors, msg)
	p.mu.Unlock()
	fmt.Fprintf(p.out, "error: %s\n", msg)
}

func (p *programTB) Fatalf(format string, args ...any) {
	p.mu.Lock()
	p.fatal = fmt.Sprintf(format, args...)
	p.mu.Unlock()
	runtime.Goexit()
}

func (p *programTB) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

// TempDir cannot report a failure but through Fatalf, like testing's.
func (p *programTB) TempDir() string {
	p.mu.Lock()
	p.dirs++
	n := p.dirs
	p.mu.Unlock()
	dir := filepath.Join(p.root, fmt.Sprintf("tmp%03d", n))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		p.Fatalf("demo: temporary directory: %v", err)
	}
	return dir
}

// Errors returns what the fake reported through Errorf.
func (p *programTB) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errors...)
}

// close runs the cleanups, last registered first.
func (p *programTB) close() {
	p.mu.Lock()
	cs := p.cleanups
	p.cleanups = nil
	p.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}

// runStory runs f on its own goroutine so that Fatalf can end it; a Fatalf
// comes back as an error.
func (p *programTB) runStory(f func() error) error {
	var (
		err      error
		returned bool
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			// recover is nil under Goexit, so only a real panic lands here.
			if r := recover(); r != nil {
				err, returned = fmt.Errorf("demo: internal error: %v", r), true
			}
		}()
		err = f()
		returned = true
	}()
	<-done
	if !returned {
		p.mu.Lock()
		defer p.mu.Unlock()
		return fmt.Errorf("%s", p.fatal)
	}
	return err
}
