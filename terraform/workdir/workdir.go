// Package workdir is the server's work directory: each process's own run
// directory (checkouts, terraform scratch), locked while the process lives,
// and the sweep that removes what dead processes left.
package workdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Names inside the work dir.
const (
	// RunPrefix starts the name of every run directory.
	RunPrefix = "run-"
	// LockName is the lock file inside a run directory.
	LockName = ".lock"
	// Checkouts of versions before run directories sat in the work dir itself.
	legacyCheckoutPrefix = "checkout-"
)

// Run is this process's own directory under the work dir: every checkout
// and every terraform job's scratch (saved plans, sensitive variable files)
// is made in it. It holds a lock (flock) while the process lives; the kernel
// drops the lock when the process dies, kill -9 included, so a later start
// tells a dead process's directory from a live one sharing the work dir and
// removes only the dead.
type Run struct {
	path   string
	unlock func()
}

// Open makes and locks a fresh run directory under workDir (mode 0700).
func Open(workDir string) (*Run, error) {
	if err := os.MkdirAll(workDir, 0o700); err != nil {
		return nil, fmt.Errorf("make work dir: %w", err)
	}
	var err error
	// Another process starting at the same moment may sweep a directory made
	// but not locked yet: then make another.
	for try := 0; try < 3; try++ {
		var path string
		if path, err = os.MkdirTemp(workDir, RunPrefix); err != nil {
			return nil, fmt.Errorf("make run dir: %w", err)
		}
		unlock, held, lerr := tryLockDir(filepath.Join(path, LockName))
		if lerr == nil && held {
			return &Run{path: path, unlock: unlock}, nil
		}
		if unlock != nil {
			unlock()
		}
		if rerr := os.RemoveAll(path); rerr != nil {
			return nil, fmt.Errorf("remove the run dir it could not lock: %w", rerr)
		}
		err = lerr
		if err == nil {
			err = errors.New("locked by another process")
		}
	}
	return nil, fmt.Errorf("lock run dir: %w", err)
}

// Path is the run directory's path.
func (d *Run) Path() string { return d.path }

// Close removes the run directory and drops its lock.
func (d *Run) Close() error {
	if d == nil {
		return nil
	}
	err := os.RemoveAll(d.path)
	d.unlock()
	if err != nil {
		return fmt.Errorf("remove run dir: %w", err)
	}
	return nil
}

// Sweep removes what dead processes left under workDir: their run
// directories (checkouts, terraform scratch with its plan and variable files)
// and checkouts of versions that made them in the work dir itself. own is
// skipped; a run directory whose lock is held belongs to a live process.
func Sweep(workDir, own string) ([]string, error) {
	entries, err := os.ReadDir(workDir)
	if err != nil {
		return nil, fmt.Errorf("read work dir: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		path := filepath.Join(workDir, e.Name())
		switch {
		case path == own || !e.IsDir():
			continue
		case strings.HasPrefix(e.Name(), RunPrefix):
			unlock, held, err := tryLockDir(filepath.Join(path, LockName))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			if err == nil && !held {
				continue // a live process's
			}
			err = os.RemoveAll(path)
			if unlock != nil {
				unlock()
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
		case strings.HasPrefix(e.Name(), legacyCheckoutPrefix):
			if err := os.RemoveAll(path); err != nil {
				errs = append(errs, err)
				continue
			}
		default:
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errors.Join(errs...)
}
