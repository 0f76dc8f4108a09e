package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// corpusDir holds JSON files that terraform, terraform-json and OpenTofu wrote for
// their own tests (testdata/PROVENANCE.md §5). Nobody here wrote them, so they show
// what check meets in the wild; MANIFEST.tsv says what each one is.
const corpusDir = "../../testdata/terraform/corpus"

// corpusKinds are the manifest's kinds. Only "plan" is a saved plan's
// `terraform show -json`; everything else must be refused.
var corpusKinds = map[string]bool{
	"plan": true, "plan-errored": true, "state": true, "validate": true,
	"schema": true, "log-stream": true, "other-nonplan": true,
}

type corpusEntry struct {
	file, kind, source string
}

func readCorpusManifest(t *testing.T) []corpusEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "MANIFEST.tsv"))
	require.NoError(t, err)
	defer f.Close()
	var entries []corpusEntry
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		cols := strings.Split(sc.Text(), "\t")
		require.Len(t, cols, 3, "MANIFEST.tsv line %d", line)
		if line == 1 {
			require.Equal(t, []string{"file", "kind", "source"}, cols)
			continue
		}
		e := corpusEntry{file: cols[0], kind: cols[1], source: cols[2]}
		require.True(t, corpusKinds[e.kind], "MANIFEST.tsv line %d: unknown kind %q", line, e.kind)
		require.False(t, seen[e.file], "MANIFEST.tsv line %d: %s listed twice", line, e.file)
		seen[e.file] = true
		entries = append(entries, e)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, entries)
	return entries
}

// readSHA256Sums maps each path in testdata/SHA256SUMS (relative to testdata/) to its sum.
func readSHA256Sums(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/SHA256SUMS")
	require.NoError(t, err)
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		sum, path, ok := strings.Cut(line, "  ")
		require.True(t, ok, "SHA256SUMS line %q", line)
		sums[strings.TrimPrefix(path, "./")] = sum
	}
	return sums
}

// The table holds every file in the corpus, each byte-for-byte the upstream file:
// a file missing from the manifest would silently escape the test, and an edited
// one would no longer be what terraform wrote.
func TestCheckCorpusIsComplete(t *testing.T) {
	entries := readCorpusManifest(t)
	sums := readSHA256Sums(t)
	listed := map[string]bool{}
	for _, e := range entries {
		listed[e.file] = true
		raw, err := os.ReadFile(filepath.Join(corpusDir, filepath.FromSlash(e.file)))
		require.NoError(t, err, e.file)
		got := sha256.Sum256(raw)
		want, ok := sums["terraform/corpus/"+e.file]
		require.True(t, ok, "%s is not in testdata/SHA256SUMS", e.file)
		require.Equal(t, want, hex.EncodeToString(got[:]), "%s differs from the upstream file", e.file)
	}
	err := filepath.WalkDir(corpusDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(corpusDir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "MANIFEST.tsv" && !listed[rel] {
			return fmt.Errorf("%s is not in MANIFEST.tsv", rel)
		}
		return nil
	})
	require.NoError(t, err)
}

// runCatchingPanics runs a subcommand in-process like run does, but turns a panic
// into a value, so one bad file fails its own subtest instead of the whole binary.
func runCatchingPanics(t *testing.T, args ...string) (code int, stdout, stderr string, panicked any) {
	t.Helper()
	defer func() { panicked = recover() }()
	code, stdout, stderr = run(t, args...)
	return code, stdout, stderr, nil
}

// Every real plan is judged (exit 0 or 1 with a full JSON verdict); everything else
// — a state, validate output, provider schemas, a -json log stream, a cloud redacted
// plan, an errored plan, any other JSON — is refused with exit 2 and one line on
// stderr, never taken as an empty plan.
func TestCheckCorpusJudgesPlansAndRefusesTheRest(t *testing.T) {
	for _, e := range readCorpusManifest(t) {
		t.Run(e.kind+"/"+e.file, func(t *testing.T) {
			// Not parallel: dispatch is not safe for concurrent use (newFlagSet writes
			// the package-level helpPrinters map), and in-process runs are fast anyway.
			path := filepath.Join(corpusDir, filepath.FromSlash(e.file))
			code, stdout, stderr, panicked := runCatchingPanics(t, "check", "--plan", path, "--format", "json")
			require.Nil(t, panicked, "check panicked on %s (from %s)", e.file, e.source)
			require.NotContains(t, stderr, "panic", e.source)
			require.NotContains(t, stderr, "goroutine", e.source)
			if e.kind == "plan" {
				requireJudged(t, e, code, stdout, stderr)
			} else {
				requireRefused(t, e, code, stdout, stderr)
			}
		})
	}
}

func requireJudged(t *testing.T, e corpusEntry, code int, stdout, stderr string) {
	t.Helper()
	require.Contains(t, []int{exitOK, exitDenied}, code, "a real plan must be judged (from %s): %s", e.source, stderr)
	require.NotContains(t, stderr, "policy evaluation failed", "a plan denied by a failing policy was not judged")
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), "stdout is not a JSON object: %q", stdout)
	var allowed bool
	require.Contains(t, got, "allowed")
	require.NoError(t, json.Unmarshal(got["allowed"], &allowed), "allowed: %s", got["allowed"])
	require.Equal(t, code == exitOK, allowed, "exit %d but allowed=%v", code, allowed)
	for _, key := range []string{"changes", "violations", "other_changes"} {
		require.Contains(t, got, key)
		var list []json.RawMessage
		require.NoError(t, json.Unmarshal(got[key], &list), "%s: %s", key, got[key])
		require.NotNil(t, list, "%s must be a list, not null", key)
	}
}

func requireRefused(t *testing.T, e corpusEntry, code int, stdout, stderr string) {
	t.Helper()
	require.Equal(t, exitUsage, code, "a %s must be refused, not judged (from %s); stdout: %.300s", e.kind, e.source, stdout)
	require.Empty(t, stdout, "a refused input prints no verdict")
	require.True(t, strings.HasSuffix(stderr, "\n"), "stderr: %q", stderr)
	require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	require.NotEmpty(t, strings.TrimSpace(stderr))
}
