package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// taintedReplacePlan is a plan whose one change, a replace without action_reason,
// is only known to be a tainted retry from prior_state, which the parse reads at
// the end; pad bytes of padding before and after prior_state's resources make
// the mapped reader drop those pages before it does.
func taintedReplacePlan(pad int) []byte {
	const m = "module.s.terraform_data.stream_group"
	input := func(n string) string {
		return `{"id":"x","input":{"consumer_group":"billing","coordinator_base_url":"http://c","shard_count":` + n +
			`,"stream_prefix":"orders"},"triggers_replace":["http://c","orders","billing","` + n + `"]}`
	}
	entry := `{"address":"` + m + `","mode":"managed","type":"terraform_data","name":"stream_group",` +
		`"provider_name":"terraform.io/builtin/terraform","change":{"actions":["delete","create"],"before":` + input("5") +
		`,"after":` + input("5") + `,"after_unknown":{},"before_sensitive":{"input":{}},"after_sensitive":{"input":{}}}}`
	filler := `"` + strings.Repeat("x", pad) + `"`
	return []byte(`{"format_version":"1.2","terraform_version":"1.5.7","planned_values":{"pad":` + filler + `}` +
		`,"resource_changes":[` + entry + `],"prior_state":{"pad":` + filler +
		`,"values":{"root_module":{"resources":[{"address":"` + m + `","tainted":true}]}}},"configuration":{"pad":` + filler + `}}`)
}

// The mapped file drops the pages behind the parse; what the parse reads again
// there (prior_state's taints) is read again from the file, not zeros.
func TestReadPlanMappedReadsDroppedPagesAgain(t *testing.T) {
	raw := taintedReplacePlan(3 * dropChunk)
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	want, err := planparse.ParseBytes(raw)
	require.NoError(t, err)
	require.Len(t, want.Changes, 1)
	require.True(t, want.Changes[0].Tainted, "the plan tells the taint from prior_state")

	got, err := readPlan(path, nil)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// A pipe cannot be mapped: it is read whole.
func TestReadPlanFromPipe(t *testing.T) {
	raw := taintedReplacePlan(100)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	go func() {
		_, _ = w.Write(raw)
		w.Close()
	}()
	defer r.Close()
	got, err := readPlan("-", r)
	require.NoError(t, err)
	want, err := planparse.ParseBytes(raw)
	require.NoError(t, err)
	require.Equal(t, want, got)
}
