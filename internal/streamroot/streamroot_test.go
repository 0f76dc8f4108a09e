package streamroot

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

func TestGroupsHCLIsStable(t *testing.T) {
	g := map[string]int{"b/x": 2, "a/y": 4}
	require.Equal(t, "{\n    \"a/y\" = { stream_prefix = \"a\", consumer_group = \"y\", shard_count = 4 }\n"+
		"    \"b/x\" = { stream_prefix = \"b\", consumer_group = \"x\", shard_count = 2 }\n  }", GroupsHCL(g))
}

// The configuration is valid Terraform with the example module.
func TestMainTFValidates(t *testing.T) {
	tf := tftest.Binary(t)
	dir := t.TempDir()
	out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "examples", "modules"), dir).CombinedOutput()
	require.NoError(t, err, string(out))
	root := filepath.Join(dir, "streams")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.tf"),
		[]byte(MainTF(filepath.Join(dir, "state.tfstate"), "http://127.0.0.1:1", map[string]int{"orders/billing": 4})), 0o644))
	for _, args := range [][]string{{"init", "-input=false", "-backend=false"}, {"validate"}} {
		cmd := exec.Command(tf, args...)
		cmd.Dir, cmd.Env = root, append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
}
