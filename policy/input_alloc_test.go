package policy

import (
	"fmt"
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
