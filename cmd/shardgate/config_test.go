package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/policy/repoconfig"
)

func TestConfigFromAtlantis(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "atlantis.yaml")
	require.NoError(t, os.WriteFile(file, []byte("version: 3\nautomerge: true\nprojects:\n- name: net\n  dir: network\n  terraform_version: v1.5.7\n"+
		"  autoplan:\n    when_modified: [\"*.tf\", \"../modules/**/*.tf\"]\n"), 0o600))
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, dispatch(context.Background(), []string{"config", "from-atlantis", file}, &out, &errOut), errOut.String())
	cfg, err := repoconfig.Parse(repoconfig.FileName, out.Bytes())
	require.NoError(t, err, out.String())
	p, ok := cfg.ProjectByName("net")
	require.True(t, ok)
	require.Equal(t, "network", p.Dir)
	require.Equal(t, []string{"*.tf", "../modules/**/*.tf"}, p.WhenModified)
	require.Contains(t, errOut.String(), "not carried over: automerge: true")

	for _, args := range [][]string{
		{"config", "from-atlantis", filepath.Join(dir, "no-such.yaml")},
		{"config", "from-atlantis", file, "second"},
		{"config", "to-atlantis"},
	} {
		out.Reset()
		errOut.Reset()
		require.Equal(t, exitUsage, dispatch(context.Background(), args, &out, &errOut), args)
		require.Empty(t, out.String())
		require.Equal(t, 1, bytes.Count(errOut.Bytes(), []byte("\n")), "one line: %q", errOut.String())
	}
	require.Contains(t, errOut.String(), "to-atlantis")

	// Without FILE, atlantis.yaml in the working directory.
	t.Chdir(dir)
	out.Reset()
	require.Equal(t, exitOK, dispatch(context.Background(), []string{"config", "from-atlantis"}, &out, &errOut))
	require.Contains(t, out.String(), "dir: network")
	require.NoError(t, os.Remove(file))
	errOut.Reset()
	require.Equal(t, exitUsage, dispatch(context.Background(), []string{"config", "from-atlantis"}, &out, &errOut))
	require.Contains(t, errOut.String(), "atlantis.yaml does not exist")
}
