package planparsetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// A generated plan equals the plan the real terraform writes for the same instances
// of examples/streams, except for the random ids and the timestamp.
func TestRenderMatchesTerraform(t *testing.T) {
	tf := tftest.Binary(t)
	out, err := exec.Command(tf, "version").Output()
	require.NoError(t, err)
	if !strings.Contains(string(out), "Terraform v"+TerraformVersion) {
		t.Skipf("the generated shape is terraform %s's; found %s", TerraformVersion, strings.SplitN(string(out), "\n", 2)[0])
	}
	dir := t.TempDir()
	repo := tftest.RepoRoot()
	copyFiles(t, filepath.Join(repo, "examples", "modules", "stream-group"), filepath.Join(dir, "modules", "stream-group"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "modules", "stream-group", "apply.sh"), []byte("exit 0\n"), 0o755))
	copyFiles(t, filepath.Join(repo, "examples", "streams"), filepath.Join(dir, "streams"))
	root := filepath.Join(dir, "streams")
	cliConfig := filepath.Join(dir, "terraformrc")
	require.NoError(t, os.WriteFile(cliConfig, nil, 0o644))
	run := func(args ...string) []byte {
		cmd := exec.Command(tf, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE="+cliConfig)
		out, err := cmd.Output()
		require.NoError(t, err, "terraform %v: %s", args, out)
		return out
	}
	ins := Instances(20, 50, 10) // one of two prefixes scaled, two instances removed
	tfvars := func(after bool) {
		var b strings.Builder
		b.WriteString("groups = {\n")
		for _, in := range ins {
			shards := in.ShardsBefore
			if after {
				if in.Removed {
					continue
				}
				shards = in.ShardsAfter
			}
			fmt.Fprintf(&b, "  %q = { stream_prefix = %q, consumer_group = %q, shard_count = %d }\n", in.Key, in.StreamPrefix, in.ConsumerGroup, shards)
		}
		b.WriteString("}\n")
		require.NoError(t, os.WriteFile(filepath.Join(root, "terraform.tfvars"), []byte(b.String()), 0o644))
	}
	tfvars(false)
	run("init", "-input=false", "-no-color")
	run("apply", "-input=false", "-auto-approve", "-no-color")
	tfvars(true)
	run("plan", "-input=false", "-no-color", "-out=plan.tfplan")
	real := run("show", "-json", "plan.tfplan")

	require.Equal(t, topLevelKeys(t, real), topLevelKeys(t, Render(ins)))
	require.Equal(t, normalise(t, real), normalise(t, Render(ins)))
}

func copyFiles(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(to, 0o755))
	files, err := filepath.Glob(filepath.Join(from, "*.tf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, filepath.Base(f)), raw, 0o644))
	}
}

func topLevelKeys(t *testing.T, plan []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(plan)))
	var keys []string
	_, err := dec.Token()
	require.NoError(t, err)
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

// normalise decodes a plan, replacing what differs from run to run: the random ids of
// terraform_data, the timestamp, and the groups default of examples/streams (the
// generated plan sets groups from a tfvars file only).
func normalise(t *testing.T, plan []byte) any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(plan, &v))
	v["timestamp"] = "T"
	vars := v["configuration"].(map[string]any)["root_module"].(map[string]any)["variables"].(map[string]any)
	delete(vars["groups"].(map[string]any), "default")
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				if _, ok := e.(string); ok && k == "id" {
					x[k] = "ID"
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return v
}
