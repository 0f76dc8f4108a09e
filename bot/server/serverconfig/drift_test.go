package serverconfig

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseDriftInterval(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       time.Duration
		problem    string
	}{
		{name: "off when absent", yaml: ""},
		{name: "off at zero", yaml: "drift: {interval: \"0\"}\n"},
		{name: "set", yaml: "drift: {interval: 6h}\n", want: 6 * time.Hour},
		{name: "too short", yaml: "drift: {interval: 1m}\n", problem: "drift.interval \"1m\" is shorter than 5m0s"},
		{name: "not a duration", yaml: "drift: {interval: daily}\n", problem: "drift.interval \"daily\" is not a positive duration"},
		{name: "negative", yaml: "drift: {interval: -1h}\n", problem: "drift.interval \"-1h\" is not a positive duration"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("c", []byte(phaseConfig(t, tt.yaml)), noEnv)
			if tt.problem != "" {
				require.ErrorContains(t, err, tt.problem)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg.DriftInterval)
		})
	}
}
