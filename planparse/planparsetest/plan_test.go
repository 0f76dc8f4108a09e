package planparsetest

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/stretchr/testify/require"
)

func TestGeneratePlan(t *testing.T) {
	tests := []struct {
		name                       string
		instances                  int
		scaled, removed            float64
		wantNoop, wantRep, wantDel int
	}{
		{name: "empty", instances: 0},
		{name: "one", instances: 1, wantNoop: 1},
		{name: "hundred", instances: 100, scaled: 10, removed: 1, wantNoop: 89, wantRep: 10, wantDel: 1},
		{name: "thousand", instances: 1000, scaled: 10, removed: 1, wantNoop: 890, wantRep: 100, wantDel: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := GeneratePlan(tt.instances, tt.scaled, tt.removed)
			if dir := os.Getenv("PLANPARSETEST_DUMP"); dir != "" {
				require.NoError(t, os.WriteFile(dir+"/"+tt.name+".json", raw, 0o644))
			}
			require.Equal(t, raw, GeneratePlan(tt.instances, tt.scaled, tt.removed), "deterministic")
			var plan tfjson.Plan
			require.NoError(t, json.Unmarshal(raw, &plan))
			require.NoError(t, plan.Validate())
			require.Equal(t, TerraformVersion, plan.TerraformVersion)
			require.Len(t, plan.ResourceChanges, tt.instances)
			counts := map[string]int{}
			prefixAfter := map[string]float64{}
			for _, rc := range plan.ResourceChanges {
				counts[fmt.Sprint(rc.Change.Actions)]++
				before := rc.Change.Before.(map[string]any)["input"].(map[string]any)
				if rc.Change.Actions.Delete() {
					continue
				}
				after := rc.Change.After.(map[string]any)["input"].(map[string]any)
				prefix := after["stream_prefix"].(string)
				if got, ok := prefixAfter[prefix]; ok {
					require.Equal(t, got, after["shard_count"], "every group of %s agrees", prefix)
				}
				prefixAfter[prefix] = after["shard_count"].(float64)
				if rc.Change.Actions.Replace() {
					require.Equal(t, before["shard_count"].(float64)+2, after["shard_count"])
				}
			}
			require.Equal(t, tt.wantNoop, counts["[no-op]"])
			require.Equal(t, tt.wantRep, counts["[delete create]"])
			require.Equal(t, tt.wantDel, counts["[delete]"])
		})
	}
}
