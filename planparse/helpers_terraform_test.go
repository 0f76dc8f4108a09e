package planparse_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/planparse"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json from real terraform plans")

const coordURL = "http://coord.test:8089"

// group is one instance of the stream-group module in a generated root config.
type group struct {
	prefix, group string
	shards        string // HCL expression, usually a number
}

// streamRoot is a root config with one module instance per entry of groups (keyed
// by the map key) plus extra HCL.
func streamRoot(groups map[string]group, extra string) string {
	return streamRootAt(coordURL, groups, extra)
}

// streamRootAt is streamRoot with the coordinator URL spelled as given.
func streamRootAt(url string, groups map[string]group, extra string) string {
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("locals {\n  groups = {\n")
	for _, k := range keys {
		g := groups[k]
		fmt.Fprintf(&b, "    %q = { stream_prefix = %q, consumer_group = %q, shard_count = %s }\n", k, g.prefix, g.group, g.shards)
	}
	b.WriteString("  }\n}\n\n")
	b.WriteString(`module "stream_group" {
  source   = "./modules/stream-group"
  for_each = local.groups

  coordinator_base_url = "` + url + `"
  coordinator_password = "s3cret-never-shown"
  stream_prefix        = each.value.stream_prefix
  consumer_group       = each.value.consumer_group
  shard_count          = each.value.shard_count
}
`)
	b.WriteString(extra)
	return b.String()
}

// tfDir is a temporary root module with a copy of examples/modules/stream-group
// whose apply.sh does nothing, so that apply needs no coordinator.
type tfDir struct {
	t      *testing.T
	dir    string
	tf     string
	env    []string
	inited bool
}

func newTFDir(t *testing.T) *tfDir {
	t.Helper()
	tf := tftest.Binary(t)
	dir := t.TempDir()
	src := filepath.Join(tftest.RepoRoot(), "examples", "modules", "stream-group")
	dst := filepath.Join(dir, "modules", "stream-group")
	require.NoError(t, os.MkdirAll(dst, 0o755))
	files, err := filepath.Glob(filepath.Join(src, "*.tf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, filepath.Base(f)), raw, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dst, "apply.sh"), []byte("exit 0\n"), 0o755))
	cliConfig := filepath.Join(dir, "terraformrc")
	require.NoError(t, os.WriteFile(cliConfig, nil, 0o644))
	return &tfDir{t: t, dir: dir, tf: tf, env: append(os.Environ(),
		"TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE="+cliConfig)}
}

func (d *tfDir) run(args ...string) string {
	d.t.Helper()
	cmd := exec.Command(d.tf, args...)
	cmd.Dir = d.dir
	cmd.Env = d.env
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		d.t.Fatalf("terraform %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

func (d *tfDir) write(config string) {
	d.t.Helper()
	require.NoError(d.t, os.WriteFile(filepath.Join(d.dir, "main.tf"), []byte(config), 0o644))
}

// apply applies config. Module sources are all local, so one init is enough.
func (d *tfDir) apply(config string) {
	d.t.Helper()
	d.write(config)
	d.init()
	d.run("apply", "-input=false", "-auto-approve", "-no-color")
}

func (d *tfDir) init() {
	d.t.Helper()
	if !d.inited {
		d.run("init", "-input=false", "-no-color")
		d.inited = true
	}
}

// plan plans config and returns `terraform show -json` of the saved plan.
func (d *tfDir) plan(config string) []byte {
	d.t.Helper()
	d.write(config)
	d.init()
	d.run("plan", "-input=false", "-no-color", "-out=plan.tfplan")
	return []byte(d.run("show", "-json", "plan.tfplan"))
}

func ptr(n int) *int { return &n }

func addr(key string) string {
	return `module.stream_group["` + key + `"].terraform_data.stream_group`
}

// moduleChange is the Change of module instance key.
func moduleChange(key string, a planparse.Action, prefix, grp string, before, after *int, reason string, actions ...string) planparse.Change {
	return planparse.Change{
		Address:          addr(key),
		Kind:             planparse.KindModule,
		StreamPrefix:     prefix,
		ConsumerGroup:    grp,
		CoordinatorURL:   coordURL,
		Coordinator:      coordURL,
		Stream:           coordURL + " " + prefix,
		Action:           a,
		ShardsBefore:     before,
		ShardsAfter:      after,
		PriorShards:      before,
		ActionReason:     reason,
		TerraformActions: actions,
	}
}

func desired(key, prefix, grp string, n int) planparse.Desired {
	return planparse.Desired{Address: addr(key), StreamPrefix: prefix, ConsumerGroup: grp, Coordinator: coordURL,
		Stream: coordURL + " " + prefix, ShardCount: n}
}
