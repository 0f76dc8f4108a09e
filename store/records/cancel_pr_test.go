package records

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlanCancelCoversTheJobsQueuedBeforeIt(t *testing.T) {
	bolt := &PlanCancel{By: "@alice", JobID: "00000000000000000012"}
	pg := &PlanCancel{By: "@alice", JobID: "12"}
	for _, tc := range []struct {
		name   string
		cancel *PlanCancel
		job    string
		want   bool
	}{
		{"earlier bolt job", bolt, "00000000000000000011", true},
		{"later bolt job", bolt, "00000000000000000013", false},
		{"the cancel's own job", bolt, "00000000000000000012", false},
		{"earlier postgres job, by number not text", pg, "9", true},
		{"later postgres job, by number not text", pg, "100", false},
		{"outside a job", pg, "", false},
		{"no cancel", nil, "1", false},
		{"a cancel made outside a job", &PlanCancel{By: "@alice"}, "1", false},
		{"an id that is no number", pg, "x1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.cancel.Covers(tc.job))
		})
	}
}
