package policy

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// soloDesired is n desired counts, each of a stream of its own: the shape of a
// plan where every module instance is one stream (issue 37).
func soloDesired(n int) []planparse.Desired {
	out := make([]planparse.Desired, n)
	for i := range out {
		prefix := fmt.Sprintf("s%06d", i)
		out[i] = planparse.Desired{Address: `module.stream_group["` + prefix + `/group"].terraform_data.stream_group`,
			StreamPrefix: prefix, ConsumerGroup: "group", Stream: planparse.StreamKey("", prefix), ShardCount: 4 + 2*(i%4)}
	}
	return out
}

// The policy input's desired counts cost few allocations per stream: on a plan
// of one stream per instance they were a fifth of a check's allocations, each
// stream paying for its own list of counts, list of addresses, address term and
// list of object entries besides the object OPA needs.
func TestDesiredTermAllocatesLittlePerStream(t *testing.T) {
	const n = 2000
	desired := soloDesired(n)
	allocs := testing.AllocsPerRun(3, func() { stringTerms{}.desiredTerm(desired, true) })
	perStream := allocs / n
	t.Logf("desiredTerm: %.1f allocations per stream", perStream)
	require.LessOrEqual(t, perStream, 11.5, "desiredTerm allocates per stream (15 before issue 37; OPA's object and array terms are 8 of them)")
}

// bytesPerRun is the fewest bytes f allocated in three runs.
func bytesPerRun(f func()) uint64 {
	least := ^uint64(0)
	var before, after runtime.MemStats
	for range 3 {
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// desiredTerm sizes its scratch (the index of streams, the list of them) once:
// grown a stream at a time on a plan of one stream per instance, they left
// ~1.9 MB of garbage at 10,000 streams, enough with the evaluation's to cost
// `shardgate check` a collection (issue 37).
func TestDesiredTermSizesItsScratchOnce(t *testing.T) {
	const n = 10000
	desired := soloDesired(n)
	perStream := float64(bytesPerRun(func() { stringTerms{}.desiredTerm(desired, false) })) / n
	t.Logf("desiredTerm: %.0f bytes per stream", perStream)
	require.LessOrEqual(t, perStream, 200.0, "desiredTerm's scratch grows as it is filled (324 bytes per stream before)")
}
