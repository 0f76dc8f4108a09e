package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	version "github.com/hashicorp/go-version"
)

// MinVersion is the oldest terraform the runner accepts: saved-plan JSON and
// the lock behaviour it relies on are those of 1.5.
const MinVersion = "1.5.0"

const versionTimeout = 20 * time.Second

// FindTerraform returns a usable terraform binary and its version. It tries,
// in order: explicit (a flag or config value; when given it must work, there
// is no fallback), baseDir/bin/terraform (installed by `make tools`; baseDir
// "" means the current directory), then terraform on PATH. A candidate that
// does not run or is older than MinVersion is skipped, and the error lists
// why each was rejected.
func FindTerraform(explicit, baseDir string) (path, version string, err error) {
	if explicit != "" {
		v, err := CheckTerraform(explicit)
		if err != nil {
			return "", "", err
		}
		return explicit, v, nil
	}
	if baseDir == "" {
		baseDir = "."
	}
	var candidates []string
	local, err := filepath.Abs(filepath.Join(baseDir, "bin", "terraform"))
	if err == nil {
		candidates = append(candidates, local)
	}
	if p, err := exec.LookPath("terraform"); err == nil {
		candidates = append(candidates, p)
	}
	var reasons []string
	for _, c := range candidates {
		if _, err := os.Stat(c); err != nil {
			continue
		}
		v, err := CheckTerraform(c)
		if err == nil {
			return c, v, nil
		}
		reasons = append(reasons, err.Error())
	}
	if len(reasons) == 0 {
		return "", "", &BinaryError{Reason: "no terraform in " + filepath.Join(baseDir, "bin") +
			" or on PATH; run 'make tools' or pass its path"}
	}
	return "", "", &BinaryError{Reason: "no usable terraform: " + strings.Join(reasons, "; ")}
}

// versions caches what Identify learnt, per binary (see binaryKey).
var versions = struct {
	sync.Mutex
	m map[binaryKey]Identity
}{m: map[binaryKey]Identity{}}

// Identity is what a binary's `version -json` says of it.
type Identity struct {
	Path    string
	Version string
	// OpenTofu is true for tofu: its version JSON lacks terraform's
	// "terraform_outdated".
	OpenTofu bool
}

// Name is "terraform 1.5.7" or "OpenTofu 1.12.6".
func (id Identity) Name() string {
	if id.OpenTofu {
		return "OpenTofu " + id.Version
	}
	return "terraform " + id.Version
}

// binaryKey names one build of a binary: its resolved path, size and
// modification time. Replacing the file (an upgrade) changes the key.
type binaryKey struct {
	path  string
	size  int64
	mtime time.Time
}

func keyOf(path string) (binaryKey, bool) {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return binaryKey{}, false
	}
	if resolved, err = filepath.Abs(resolved); err != nil {
		return binaryKey{}, false
	}
	st, err := os.Stat(resolved)
	if err != nil {
		return binaryKey{}, false
	}
	return binaryKey{path: resolved, size: st.Size(), mtime: st.ModTime()}, true
}

// CheckTerraform runs `terraform version` and returns the version when it is
// at least MinVersion. A binary that passed is not run again until it
// changes: the bot makes a job per plan and apply, and each `terraform
// version` costs a process start.
func CheckTerraform(path string) (string, error) {
	id, err := Identify(path)
	return id.Version, err
}

// Identify is CheckTerraform that also says whether the binary is OpenTofu.
func Identify(path string) (Identity, error) {
	key, cacheable := keyOf(path)
	if cacheable {
		versions.Lock()
		id, ok := versions.m[key]
		versions.Unlock()
		if ok {
			id.Path = path
			return id, nil
		}
	}
	id, err := checkTerraform(path)
	if err == nil && cacheable {
		versions.Lock()
		versions.m[key] = id
		versions.Unlock()
	}
	return id, err
}

func checkTerraform(path string) (Identity, error) {
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version", "-json")
	cmd.Env = []string{"CHECKPOINT_DISABLE=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	out, err := cmd.Output()
	if err != nil {
		reason := "does not run"
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			reason = "not found"
		}
		return Identity{}, &BinaryError{Path: path, Reason: reason + ": " + Redact(firstLine(err.Error()))}
	}
	var info struct {
		Version  string `json:"terraform_version"`
		Outdated *bool  `json:"terraform_outdated"`
	}
	if err := json.Unmarshal(jsonDocument(out), &info); err != nil || info.Version == "" {
		return Identity{}, &BinaryError{Path: path, Reason: "cannot read its version (is it terraform or tofu?)"}
	}
	ok, err := versionAtLeast(info.Version, MinVersion)
	if err != nil {
		return Identity{}, &BinaryError{Path: path, Version: info.Version, Reason: err.Error()}
	}
	if !ok {
		return Identity{}, &BinaryError{Path: path, Version: info.Version,
			Reason: fmt.Sprintf("version %s is below %s", info.Version, MinVersion)}
	}
	return Identity{Path: path, Version: info.Version, OpenTofu: info.Outdated == nil}, nil
}

// versionAtLeast compares the major.minor.patch of two versions (as
// hashicorp/go-version reads them); pre-release suffixes are ignored, so a
// 1.6.0-alpha counts as 1.6.0. Terraform and OpenTofu always print all three
// numbers: a version with fewer is an error.
func versionAtLeast(v, min string) (bool, error) {
	a, err := coreVersion(v)
	if err != nil {
		return false, err
	}
	b, err := coreVersion(min)
	if err != nil {
		return false, err
	}
	return a.GreaterThanOrEqual(b), nil
}

func coreVersion(v string) (*version.Version, error) {
	parsed, err := version.NewSemver(v)
	if err != nil {
		return nil, fmt.Errorf("parse version %q: %w", v, err)
	}
	if core, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), "-"); strings.Count(core, ".") != 2 {
		return nil, fmt.Errorf("parse version %q: want major.minor.patch", v)
	}
	return parsed.Core(), nil
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
