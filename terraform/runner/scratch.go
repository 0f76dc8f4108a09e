package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A job's scratch directory holds what must never be read by anyone else:
// the sensitive variable file (coordinator passwords at apply time), the
// saved plan (which holds those values too) and the CLI configuration. It is
// 0700, its files 0600; the variable file exists only while terraform plans,
// a saved plan of the job's own only until it is applied, and Close removes
// the rest. A process killed with -9 cannot clean up: each job holds an
// flock on its scratch dir, which the kernel drops with the process, and
// SweepScratch removes every scratch dir nobody holds.

const (
	scratchPrefix   = "shardgate-job-"
	scratchLockName = ".lock"
	// scratchGrace protects a scratch dir made so recently that its maker
	// may not hold its lock yet.
	scratchGrace = time.Minute
)

// makeScratch makes the job's private scratch dir and takes its lock; with
// WithRegistryProvidersOnly the default data dir is made inside it.
func (j *Job) makeScratch(cfg *JobConfig) error {
	dir, err := os.MkdirTemp(j.r.tempDir, scratchPrefix)
	if err != nil {
		return fmt.Errorf("make scratch dir: %w", err)
	}
	j.scratch = dir
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("make scratch dir private: %w", err)
	}
	if j.unlock, err = holdScratch(filepath.Join(dir, scratchLockName)); err != nil {
		return fmt.Errorf("lock scratch dir: %w", err)
	}
	// Its own directory, so that a sandboxed plan may write it.
	if err := os.Mkdir(filepath.Join(dir, "plan"), 0o700); err != nil {
		return fmt.Errorf("make plan dir: %w", err)
	}
	if j.r.registryOnly && cfg.DataDir == "" {
		// Nothing a checkout ships under .terraform (providers, modules) is used.
		cfg.DataDir = filepath.Join(dir, "data")
		if err := os.Mkdir(cfg.DataDir, 0o700); err != nil {
			return fmt.Errorf("make data dir: %w", err)
		}
	}
	return nil
}

// beforePlan writes the sensitive variables and, for a plan file the caller
// named, makes it private before terraform writes it (terraform truncates an
// existing file, keeping its mode; the job's own is in the 0700 scratch dir
// and made 0600 after). done undoes it: the variable file goes, and after a
// failure so does the job's own plan file (terraform saves errored plans,
// which can never be applied but hold the sensitive values), or an empty one.
func (j *Job) beforePlan() (done func(error), err error) {
	if err := j.writeVarFile(); err != nil {
		return nil, err
	}
	if j.cfg.PlanFile != "" {
		f, err := os.OpenFile(j.planFile, os.O_WRONLY|os.O_CREATE, 0o600)
		if err == nil {
			err = errors.Join(f.Chmod(0o600), f.Close())
		}
		if err != nil {
			j.removeVarFile()
			return nil, fmt.Errorf("make plan file private: %w", err)
		}
	}
	return func(planErr error) {
		j.removeVarFile()
		st, err := os.Stat(j.planFile)
		switch {
		case err != nil:
		case planErr != nil && (j.cfg.PlanFile == "" || st.Size() == 0):
			_ = os.Remove(j.planFile)
		default:
			_ = os.Chmod(j.planFile, 0o600)
		}
	}, nil
}

// writeVarFile puts the sensitive variables in a JSON var file only this
// user can read, inside the job's private scratch dir.
func (j *Job) writeVarFile() error {
	if j.varFile == "" {
		return nil
	}
	if err := writePrivateJSON(j.varFile, j.sensitive); err != nil {
		j.removeVarFile()
		return fmt.Errorf("write sensitive variables: %w", err)
	}
	return nil
}

// writePrivateJSON writes values as a JSON object into a file only the
// process's user may read.
func writePrivateJSON(file string, values map[string]string) error {
	b, err := json.Marshal(values)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o600)
}

func (j *Job) removeVarFile() {
	if j.varFile != "" {
		_ = os.Remove(j.varFile)
	}
}

// afterApply removes the job's own saved plan: it holds the sensitive values
// and can never be applied again. A plan file the caller named is theirs.
func (j *Job) afterApply() {
	if j.cfg.PlanFile == "" {
		_ = os.Remove(j.planFile)
	}
}

// SweepScratch removes the scratch directories that jobs of dead processes
// left in the runner's temp dir (WithTempDir): any a live job holds is
// kept, whichever process it belongs to. Call it at start.
func (r *Runner) SweepScratch() (removed []string, err error) {
	base := r.tempDir
	if base == "" {
		base = os.TempDir()
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("sweep scratch dirs: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), scratchPrefix) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		if !r.abandoned(dir) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("sweep scratch dirs: %w", err)
	}
	return removed, nil
}

// abandoned says whether no live job holds dir. One without a lock file is
// abandoned once it is older than scratchGrace.
func (r *Runner) abandoned(dir string) bool {
	lock := filepath.Join(dir, scratchLockName)
	if _, err := os.Stat(lock); err != nil {
		st, err := os.Stat(dir)
		return err == nil && r.now().Sub(st.ModTime()) > scratchGrace
	}
	return scratchFree(lock)
}
