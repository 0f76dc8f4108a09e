package githubtest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GitRepo is a real local git repository a test commits Terraform files to;
// the fake serves its tarballs, contents and diffs by branch or sha.
type GitRepo struct {
	t   TB
	dir string
}

// NewGitRepo initialises an empty repository on branch "main" in a temporary
// directory removed when the test ends.
func NewGitRepo(t TB) *GitRepo {
	t.Helper()
	g := &GitRepo{t: t, dir: t.TempDir()}
	g.must("init", "--quiet", "--initial-branch=main")
	return g
}

// Dir is the work tree.
func (g *GitRepo) Dir() string { return g.dir }

// WriteFile writes content at a slash-separated path of the work tree,
// creating parent directories.
func (g *GitRepo) WriteFile(path, content string) {
	g.t.Helper()
	full := filepath.Join(g.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		g.t.Fatalf("githubtest: create directory for %s: %v", path, err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		g.t.Fatalf("githubtest: write %s: %v", path, err)
	}
}

// Symlink makes a symbolic link at a slash-separated path of the work tree
// pointing at target, as written (git keeps it as a link).
func (g *GitRepo) Symlink(path, target string) {
	g.t.Helper()
	full := filepath.Join(g.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		g.t.Fatalf("githubtest: create directory for %s: %v", path, err)
	}
	if err := os.Symlink(target, full); err != nil {
		g.t.Fatalf("githubtest: symlink %s: %v", path, err)
	}
}

// RemoveFile deletes a file from the work tree; the next Commit records it.
func (g *GitRepo) RemoveFile(path string) {
	g.t.Helper()
	if err := os.Remove(filepath.Join(g.dir, filepath.FromSlash(path))); err != nil {
		g.t.Fatalf("githubtest: remove %s: %v", path, err)
	}
}

// Commit stages every change and commits it on the current branch, returning
// the new commit's sha.
func (g *GitRepo) Commit(msg string) string {
	g.t.Helper()
	g.must("add", "--all")
	g.must("commit", "--quiet", "--allow-empty", "--message", msg)
	return g.Head()
}

// Branch creates a branch at the current commit and switches to it.
func (g *GitRepo) Branch(name string) {
	g.t.Helper()
	g.must("checkout", "--quiet", "-b", name)
}

// Checkout switches the work tree to an existing branch or commit.
func (g *GitRepo) Checkout(ref string) {
	g.t.Helper()
	g.must("checkout", "--quiet", ref)
}

// Merge merges ref into the current branch with a merge commit (git merge
// --no-ff), as GitHub's "Create a merge commit" does, and returns its sha.
func (g *GitRepo) Merge(ref, msg string) string {
	g.t.Helper()
	g.must("merge", "--quiet", "--no-ff", "--message", msg, ref)
	return g.Head()
}

// Head is the sha of the current commit.
func (g *GitRepo) Head() string {
	g.t.Helper()
	sha, err := g.Resolve("HEAD")
	if err != nil {
		g.t.Fatalf("githubtest: %v", err)
	}
	return sha
}

// Resolve turns a branch, tag or (abbreviated) sha into a full commit sha.
func (g *GitRepo) Resolve(ref string) (string, error) {
	if strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("resolve %q: not a ref", ref)
	}
	out, err := g.run(nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("resolve %q: unknown revision", ref)
	}
	return strings.TrimSpace(out), nil
}

func (g *GitRepo) must(args ...string) string {
	g.t.Helper()
	out, err := g.run(nil, args...)
	if err != nil {
		g.t.Fatalf("githubtest: %v", err)
	}
	return out
}

// run executes git isolated from the user's and system's configuration, so
// signing hooks or templates on the machine cannot change the commits.
func (g *GitRepo) run(stdout io.Writer, args ...string) (string, error) {
	full := append([]string{
		"-c", "user.name=githubtest", "-c", "user.email=githubtest@example.invalid",
		"-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", "-c", "core.autocrlf=false",
	}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
