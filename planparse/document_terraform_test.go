package planparse_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// What terraform 1.5.7 itself prints: only `show -json` of a saved plan is a plan.
func TestParseTerraformDocuments(t *testing.T) {
	t.Parallel()
	d := newTFDir(t)
	config := streamRoot(map[string]group{"orders/billing": {"orders", "billing", "4"}}, "")
	d.write(config)
	d.init()
	empty := d.runEnv("show", "-json") // no state yet
	validate := d.runEnv("validate", "-json", "-no-color")
	schema := d.runEnv("providers", "schema", "-json")
	d.apply(config)
	state := d.runEnv("show", "-json")
	log := d.runEnv("plan", "-json", "-input=false", "-no-color")
	unchanged := d.plan(config)

	for _, tt := range []struct {
		name, doc, looksLike string
	}{
		{"show -json without a state", empty, "`terraform show -json` of an empty state"},
		{"validate -json", validate, "`terraform validate -json` output"},
		{"providers schema -json", schema, "`terraform providers schema -json` output"},
		{"show -json of the state", state, "`terraform show -json` of a state"},
		{"plan -json", log, "`terraform plan -json` output (its log)"},
	} {
		for name, parse := range parsers {
			cs, err := parse([]byte(tt.doc))
			require.Nil(t, cs)
			var npe *planparse.NotPlanError
			require.True(t, errors.As(err, &npe), "%s %s: %v", tt.name, name, err)
			require.Equal(t, tt.looksLike, npe.LooksLike, "%s %s", tt.name, name)
		}
	}
	cs, err := planparse.ParseBytes(unchanged)
	require.NoError(t, err, "a plan without changes is a plan")
	require.Len(t, cs.Changes, 1)
	require.Equal(t, planparse.ActionNoop, cs.Changes[0].Action)
}

// runEnv runs terraform and returns its stdout even when it exits non-zero
// (validate -json reports an invalid configuration that way).
func (d *tfDir) runEnv(args ...string) string {
	d.t.Helper()
	cmd := exec.Command(d.tf, args...)
	cmd.Dir = d.dir
	cmd.Env = d.env
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		d.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
	}
	require.NotEmpty(d.t, out, "terraform %s printed nothing", strings.Join(args, " "))
	return string(out)
}
