package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The drain benchmark compares the claims of the first and the last 2% of
// the backlog: each end must ask the same work of a claim but for the
// backlog. A claim that coalesces a twin finishes two jobs, so the share
// of such claims must be alike at both ends, and a tenth of the jobs stay
// comments that coalesce with at most one other.
func TestDrainWorkloadCoalescesAlikeAtBothEnds(t *testing.T) {
	const n = 100_000
	keys := map[string][]int64{}
	for i := int64(1); i <= n; i++ {
		var j Job
		drainJob(i, &j)
		if j.CoalesceKey != "" {
			keys[j.CoalesceKey] = append(keys[j.CoalesceKey], i)
		}
	}
	comments, coalescing := 0, map[int64]bool{}
	for _, is := range keys {
		require.LessOrEqual(t, len(is), 2, "a claim coalesces at most one other job")
		comments += len(is)
		if len(is) == 2 {
			coalescing[is[0]] = true // the older is claimed first and takes the younger
		}
	}
	require.InDelta(t, n/10, comments, n/100, "a tenth of the jobs are comments")
	share := func(from, to int64) float64 {
		c := 0
		for i := from; i <= to; i++ {
			if coalescing[i] {
				c++
			}
		}
		return float64(c) / float64(to-from+1)
	}
	window := int64(n / 50)
	start, end := share(1, window), share(n-window+1, n)
	t.Logf("coalescing claims: %.3f of the first 2%%, %.3f of the last", start, end)
	require.InDelta(t, start, end, 0.03, "coalescing claims at the start %.3f, at the end %.3f", start, end)
}
