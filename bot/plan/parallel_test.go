package plan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// The plan slots bound terraform runs across the jobs of a process: the
// first acquire sizes them, a full set makes the next wait until a release
// (or its context ends).
func TestPlanSlotsBoundTheRunsOfAllJobs(t *testing.T) {
	var slots planSlots
	first, err := slots.acquire(context.Background(), 2)
	require.NoError(t, err)
	second, err := slots.acquire(context.Background(), 8) // sized already: 2
	require.NoError(t, err)

	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = slots.acquire(done, 2)
	require.ErrorIs(t, err, context.Canceled, "a third run waits while two hold the slots")

	first()
	third, err := slots.acquire(context.Background(), 2)
	require.NoError(t, err, "a release frees a slot")
	second()
	third()
}
