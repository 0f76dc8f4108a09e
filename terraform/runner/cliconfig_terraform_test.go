package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVendoredProviderNeverRuns: a pull request ships an executable
// "provider" in terraform.d/plugins, an implicit local mirror terraform uses
// unless the CLI configuration names the installation methods.
func TestVendoredProviderNeverRuns(t *testing.T) {
	dir := writeModule(t, `terraform {
  required_providers {
    evil = { source = "acme/evil", version = "1.0.0" }
  }
}
resource "evil_thing" "x" {}
`)
	marker := filepath.Join(t.TempDir(), "pwned")
	plugin := filepath.Join(dir, "terraform.d", "plugins", "registry.terraform.io", "acme", "evil", "1.0.0",
		runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-evil_v1.0.0")
	require.NoError(t, os.MkdirAll(filepath.Dir(plugin), 0o755))
	require.NoError(t, os.WriteFile(plugin, []byte(fmt.Sprintf("#!/bin/sh\necho ran > %s\nexit 1\n", marker)), 0o755))

	ctx := context.Background()
	j := newJob(t, realRunner(t, WithRegistryProvidersOnly()), JobConfig{Dir: dir})
	err := j.Init(ctx)
	var initErr *InitError
	require.ErrorAs(t, err, &initErr, "the provider is not in the registry (nor reachable here): init must fail")
	require.Contains(t, initErr.Tail, "acme/evil")
	_, err = j.Plan(ctx)
	require.Error(t, err, "nothing was installed, so nothing can be planned")
	require.NoFileExists(t, marker, "the vendored provider never ran")
}
