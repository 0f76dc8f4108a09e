package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

func TestDemoIsRegistered(t *testing.T) {
	var stderr bytes.Buffer
	require.Equal(t, exitOK, dispatch(context.Background(), []string{"help"}, &bytes.Buffer{}, &stderr))
	require.Contains(t, stderr.String(), "demo")
}

// The test binary has no shardgate-demo beside it, as a shardgate installed
// without `make demo`.
func TestDemoWithoutTheDemoBinary(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), []string{"demo", "--quiet"}, &stdout, &stderr)
	require.Equal(t, exitUsage, code)
	require.Empty(t, stdout.String())
	msg := stderr.String()
	require.Equal(t, 1, strings.Count(strings.TrimSpace(msg), "\n")+1, "one line: %q", msg)
	for _, s := range []string{"shardgate demo:", "shardgate-demo", "make demo", "go run ./cmd/shardgate-demo"} {
		require.Contains(t, msg, s)
	}
}

// shardgate demo hands its arguments, output and exit code through.
func TestDemoRunsTheDemoBinary(t *testing.T) {
	fake := filepath.Join(t.TempDir(), demoBinaryName)
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho \"demo got: $*\"\necho \"on stderr\" >&2\nexit 7\n"), 0o700))
	old := demoBinary
	demoBinary = func() (string, error) { return fake, nil }
	t.Cleanup(func() { demoBinary = old })

	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), []string{"demo", "--until", "allowed", "--quiet"}, &stdout, &stderr)
	require.Equal(t, 7, code)
	require.Equal(t, "demo got: --until allowed --quiet\n", stdout.String())
	require.Equal(t, "on stderr\n", stderr.String())
}

// With both binaries built side by side, as `make demo` builds them,
// `shardgate demo` is the demo.
func TestDemoBinaryBesideShardgate(t *testing.T) {
	tftest.SkipIfShort(t, "builds shardgate and shardgate-demo")
	dir := t.TempDir()
	for _, pkg := range []string{".", "../shardgate-demo"} {
		out, err := exec.Command("go", "build", "-o", dir+"/", pkg).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(dir, "shardgate"), "demo", "--until", "merged")
	cmd.Dir = t.TempDir() // any working directory
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, exitUsage, exit.ExitCode())
	require.Equal(t, "shardgate demo: --until must be allowed or applied, got \"merged\"\n", stderr.String())
}

// The service's binary holds neither the fake GitHub (the demo's) nor an
// OpenAPI library: `go list -deps ./cmd/shardgate` is what it links.
func TestServiceBinaryLinksNoFakeGitHub(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/shardgate/shardgate/bot", "the listing is of the service")
	for _, d := range deps {
		require.NotEqual(t, "github.com/shardgate/shardgate/internal/testing/githubtest", d, "the fake GitHub is linked into the service")
		require.NotEqual(t, "github.com/shardgate/shardgate/cmd/shardgate-demo/demo", d, "the demo is linked into the service")
		require.NotContains(t, d, "github.com/shardgate/shardgate/internal/testing/", "test support is linked into the service")
		require.NotContains(t, d, "fake", "a fake is linked into the service")
		require.NotEqual(t, "github.com/shardgate/shardgate", d, "the embedded test fixtures are linked into the service")
		require.NotContains(t, strings.ToLower(d), "openapi", "an OpenAPI library is linked into the service")
		require.NotContains(t, d, "chromedp", "the status page's browser-test driver is linked into the service")
	}
	require.Contains(t, deps, "github.com/shardgate/shardgate/bot/statuspage", "the status page is served by the service")
}
