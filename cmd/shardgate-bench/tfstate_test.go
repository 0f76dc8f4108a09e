package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// The state the bench writes for a root is the state terraform 1.5.7's apply
// leaves for it, but for what differs from apply to apply (the random ids, the
// lineage) and the serial: on both shapes, at 20 instances.
func TestWrittenStateIsTheAppliedState(t *testing.T) {
	o := options{repo: tftest.RepoRoot(), cache: t.TempDir(), terraform: tftest.Binary(t)}
	for _, shape := range []string{"", soloPrefix} {
		t.Run("shape "+shape, func(t *testing.T) {
			r := newShapedRoot(o, 20, shape)
			ins := instances(20, shape+caseDenied)
			require.NoError(t, r.prepare(context.Background(), o.repo, ins))
			require.NoError(t, r.run(context.Background(), io.Discard, "apply", "-input=false", "-auto-approve", "-no-color"))
			applied, err := os.ReadFile(filepath.Join(r.dir, "terraform.tfstate"))
			require.NoError(t, err)

			require.NoError(t, r.writeState(ins))
			written, err := os.ReadFile(filepath.Join(r.dir, "terraform.tfstate"))
			require.NoError(t, err)
			require.Equal(t, comparableState(t, applied), comparableState(t, written))
		})
	}
}

// uuidForm is a terraform_data id or a lineage.
var uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// comparableState is a state re-encoded with its serial dropped and every id
// and the lineage replaced by "UUID" once checked to have a UUID's form.
func comparableState(t *testing.T, state []byte) string {
	t.Helper()
	var s map[string]any
	require.NoError(t, json.Unmarshal(state, &s))
	delete(s, "serial")
	require.Regexp(t, uuidForm, s["lineage"])
	s["lineage"] = "UUID"
	resources, _ := s["resources"].([]any)
	require.NotEmpty(t, resources)
	for _, res := range resources {
		for _, in := range res.(map[string]any)["instances"].([]any) {
			attrs := in.(map[string]any)["attributes"].(map[string]any)
			require.Regexp(t, uuidForm, attrs["id"])
			attrs["id"] = "UUID"
		}
	}
	b, err := json.MarshalIndent(s, "", " ")
	require.NoError(t, err)
	return string(b)
}
