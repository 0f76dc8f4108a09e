package serverconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReportMaxProjectChecks(t *testing.T) {
	cfg, err := Parse("c", []byte(phaseConfig(t, "")), noEnv)
	require.NoError(t, err)
	require.Equal(t, DefaultMaxProjectChecks, cfg.MaxProjectChecks)
	require.Equal(t, 20, (&Config{}).ProjectChecksLimit(), "a Config built by hand")
	cfg, err = Parse("c", []byte(phaseConfig(t, "report:\n  max_project_checks: 50\n")), noEnv)
	require.NoError(t, err)
	require.Equal(t, 50, cfg.ProjectChecksLimit())
	_, err = Parse("c", []byte(phaseConfig(t, "report:\n  max_project_checks: 0\n")), noEnv)
	require.ErrorContains(t, err, "report.max_project_checks must be at least 1, got 0")
}
