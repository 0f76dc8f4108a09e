package main

import (
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// The one-stream-per-instance shapes (issue 37): every module instance is a
// stream of its own (one consumer group each), so a plan of N instances holds N
// streams where the other shapes hold N/10. Per-stream costs (desired counts,
// the policy input, the report) are ten times those of the grouped shapes at the
// same size. The same three cases: solo-denied, solo-allowed, solo-heavy.
const soloPrefix = "solo-"

// soloCase is the grouped case a solo case mirrors ("denied" for "solo-denied"),
// and whether name is a solo case at all.
func soloCase(name string) (string, bool) {
	return strings.CutPrefix(name, soloPrefix)
}

// soloInstances are size instances, one stream each, in address order: the
// instances of the grouped case with each instance given a stream prefix of its
// own (the prefix's position in the plan), so the scaled and removed instances
// are picked as in the grouped case, now per stream.
func soloInstances(size int, base string) []planparsetest.Instance {
	var ins []planparsetest.Instance
	switch base {
	case caseHeavy:
		ins = planparsetest.Instances(size, scaledPercent, removedPercent)
	case caseDenied:
		ins = planparsetest.Instances(size, scaledPercent, removedPercent)
	default:
		ins = planparsetest.Instances(size, scaledPercent, 0)
	}
	for i := range ins {
		in := &ins[i]
		in.StreamPrefix = fmt.Sprintf("s%06d", i)
		in.ConsumerGroup = "group"
		in.Key = in.StreamPrefix + "/" + in.ConsumerGroup
		// Scale one stream in ten, spread evenly; keep the grouped case's
		// removals.
		in.ShardsBefore = 4 + 2*(i%4)
		in.ShardsAfter = in.ShardsBefore
		if !in.Removed && i%10 == 3 {
			in.ShardsAfter = in.ShardsBefore + 2
			if base == caseHeavy {
				in.ShardsAfter = heavyDelta(i/10, in.ShardsBefore)
			}
		}
	}
	return ins
}

// soloResource (coordinator.tf) and soloOverride (main_override.tf) are added to
// the real root of the solo shapes:
// the coordinator's URL reaches the module through a resource, so terraform
// 1.5.7 writes relevant_attributes (the resource attributes the changes depend
// on), which the held-out plan of issue 37 had and examples/streams alone does
// not; and the plan holds one resource that is no stream group, unchanged.
const soloResource = `resource "terraform_data" "coordinator" {
  input = var.coordinator_base_url
}
`

const soloOverride = `module "stream_group" {
  coordinator_base_url = terraform_data.coordinator.output
}
`
