package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeProvider is the executable a filesystem mirror serves: init installs
// it (checks its hash, copies it into the plugin cache and links it into the
// data dir) without running it. It is large enough that a second writer
// racing the first would be caught half-way.
var fakeProvider = append([]byte("#!/bin/sh\nexit 1\n#"), bytes.Repeat([]byte("shardgate"), 2<<20)...)

// N concurrent inits through one runner, each of its own project requiring
// one provider that only a local filesystem mirror has, share one plugin
// cache: every init succeeds, the cache ends up holding the provider once
// and whole, and every job's data dir links that same file. Terraform's cache
// is not safe for concurrent writers; the runner serialises the inits that use
// it (lockPluginCache).
func TestConcurrentInitsShareOnePluginCache(t *testing.T) {
	const n = 8
	root := t.TempDir()
	platform := runtime.GOOS + "_" + runtime.GOARCH
	mirror := filepath.Join(root, "mirror")
	pkg := filepath.Join(mirror, "registry.example.com", "acme", "fake", "1.0.0", platform)
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "terraform-provider-fake_v1.0.0"), fakeProvider, 0o755))
	rc := filepath.Join(root, "terraform.rc")
	require.NoError(t, os.WriteFile(rc, fmt.Appendf(nil, "provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror), 0o644))
	t.Setenv("TF_CLI_CONFIG_FILE", rc)
	cache := filepath.Join(root, "cache")
	r := realRunner(t, WithPluginCacheDir(cache))

	jobs := make([]*Job, n)
	for i := range jobs {
		dir := writeModule(t, "terraform {\n  required_providers {\n    fake = { source = \"registry.example.com/acme/fake\", version = \"1.0.0\" }\n  }\n}\n")
		jobs[i] = newJob(t, r, JobConfig{Dir: dir})
	}
	linked := func(j *Job) string {
		return filepath.Join(j.cfg.DataDir, "providers", "registry.example.com", "acme", "fake", "1.0.0", platform, "terraform-provider-fake_v1.0.0")
	}
	// Each job reads its provider as soon as its init ends, while the other
	// inits still run: what a plan starting then would run.
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = j.Init(context.Background()); errs[i] != nil {
				return
			}
			got, err := os.ReadFile(linked(j))
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("read its provider right after init: %w", err)
			case !bytes.Equal(fakeProvider, got):
				errs[i] = fmt.Errorf("its provider right after init is %d bytes, not the mirror's %d", len(got), len(fakeProvider))
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "init %d", i)
	}

	cached := filepath.Join(cache, "registry.example.com", "acme", "fake", "1.0.0", platform, "terraform-provider-fake_v1.0.0")
	got, err := os.ReadFile(cached)
	require.NoError(t, err)
	require.True(t, bytes.Equal(fakeProvider, got), "the cached provider is not the mirror's")
	entries, err := os.ReadDir(filepath.Dir(cached))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the cache holds the provider once, nothing half-written beside it")
	for i, j := range jobs {
		got, err := os.ReadFile(linked(j))
		require.NoError(t, err, "job %d", i)
		require.True(t, bytes.Equal(fakeProvider, got), "job %d links another file", i)
	}
}
