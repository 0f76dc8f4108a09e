// Package planparsetest generates realistic `terraform show -json` plans for tests and
// benchmarks of planparse and the packages built on it.
package planparsetest

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"strconv"
)

// TerraformVersion is the version the generated plans claim to come from; their shape
// is copied from a real plan of examples/streams written by that version.
const TerraformVersion = "1.5.7"

// CoordinatorURL is the coordinator_base_url every generated instance uses.
const CoordinatorURL = "http://127.0.0.1:8089"

// GroupsPerPrefix is how many consumer groups a stream prefix gets on average.
const GroupsPerPrefix = 10

// Instance is one stream-group module instance of a generated plan.
type Instance struct {
	Key           string // for_each key, "<prefix>/<group>"
	StreamPrefix  string
	ConsumerGroup string
	ShardsBefore  int
	ShardsAfter   int  // equal to ShardsBefore unless the prefix is scaled
	Removed       bool // planned as ["delete"]
}

// Address is the instance's terraform_data address.
func (in Instance) Address() string {
	return `module.stream_group["` + in.Key + `"].terraform_data.stream_group`
}

// Instances returns the instances GeneratePlan writes, in plan (address) order.
// Instances spread over instances/GroupsPerPrefix stream prefixes; scaledPercent of the
// prefixes change the shard count of all their groups by +2; removedPercent of the
// instances are removed from the configuration.
func Instances(instances int, scaledPercent, removedPercent float64) []Instance {
	if instances <= 0 {
		return nil
	}
	prefixes := max(1, instances/GroupsPerPrefix)
	out := make([]Instance, 0, instances)
	// Instance i belongs to prefix i%prefixes; walking prefixes in order keeps the
	// for_each keys sorted, the order terraform writes them in.
	for p := range prefixes {
		prefix := fmt.Sprintf("stream-%05d", p)
		before := 4 + 2*(p%4)
		after := before
		if picked(p, scaledPercent) {
			after = before + 2
		}
		for g := 0; g*prefixes+p < instances; g++ {
			group := fmt.Sprintf("group-%03d", g)
			out = append(out, Instance{
				Key:           prefix + "/" + group,
				StreamPrefix:  prefix,
				ConsumerGroup: group,
				ShardsBefore:  before,
				ShardsAfter:   after,
			})
		}
	}
	for i := range out {
		// The offset keeps removals off the scaled prefixes' last groups, so that a
		// plan mixes scaled, removed and unchanged prefixes.
		if picked(i+37, removedPercent) {
			out[i].Removed = true
			out[i].ShardsAfter = out[i].ShardsBefore
		}
	}
	return out
}

// picked spreads percent% of the indexes evenly: index i is picked when the running
// total of percent/100 crosses an integer at i.
func picked(i int, percent float64) bool {
	if percent <= 0 {
		return false
	}
	return int(float64(i+1)*percent/100) > int(float64(i)*percent/100)
}

// GeneratePlan returns the JSON plan terraform 1.5.7 writes for examples/streams with
// the given instances (see Instances) under module.stream_group (for_each). The output
// is deterministic and about 3 KB per instance.
func GeneratePlan(instances int, scaledPercent, removedPercent float64) []byte {
	return Render(Instances(instances, scaledPercent, removedPercent))
}

// Render writes the plan for the given instances, which must be in address order.
func Render(ins []Instance) []byte {
	var b bytes.Buffer
	b.Grow(len(ins)*3500 + 8192)
	b.WriteString(`{"format_version":"1.2","terraform_version":"` + TerraformVersion + `","variables":{"coordinator_base_url":{"value":"` + CoordinatorURL + `"},"coordinator_password":{"value":""},"coordinator_username":{"value":""},"groups":{"value":{`)
	first := true
	for _, in := range ins {
		if in.Removed {
			continue
		}
		comma(&b, &first)
		fmt.Fprintf(&b, `"%s":{"consumer_group":"%s","shard_count":%d,"stream_prefix":"%s"}`, in.Key, in.ConsumerGroup, in.ShardsAfter, in.StreamPrefix)
	}
	b.WriteString(`}},"shardgate_reason":{"value":"terraform apply"},"shardgate_request_id_prefix":{"value":"terraform"},"shardgate_requested_by":{"value":"terraform"}},"planned_values":{"root_module":{`)
	writeModules(&b, ins, plannedResource)
	b.WriteString(`}},"resource_changes":[`)
	for i, in := range ins {
		if i > 0 {
			b.WriteByte(',')
		}
		writeChange(&b, in)
	}
	b.WriteString(`],"prior_state":{"format_version":"1.0","terraform_version":"` + TerraformVersion + `","values":{"root_module":{`)
	writeModules(&b, ins, priorResource)
	b.WriteString(`}}},"configuration":`)
	b.WriteString(configuration)
	b.WriteString(`,"timestamp":"2026-01-01T00:00:00Z"}`)
	return b.Bytes()
}

func comma(b *bytes.Buffer, first *bool) {
	if !*first {
		b.WriteByte(',')
	}
	*first = false
}

// writeModules writes `"child_modules":[...]` for the instances resource picks, or
// nothing when there are none (terraform omits an empty list).
func writeModules(b *bytes.Buffer, ins []Instance, resource func(*bytes.Buffer, Instance) bool) {
	first := true
	for _, in := range ins {
		var r bytes.Buffer
		if !resource(&r, in) {
			continue
		}
		if first {
			b.WriteString(`"child_modules":[`)
		} else {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(`{"resources":[`)
		b.Write(r.Bytes())
		b.WriteString(`],"address":"` + moduleAddress(in) + `"}`)
	}
	if !first {
		b.WriteByte(']')
	}
}

func plannedResource(b *bytes.Buffer, in Instance) bool {
	if in.Removed {
		return false
	}
	b.WriteString(resourceHead(in) + `,"schema_version":0,"values":{`)
	if in.ShardsAfter == in.ShardsBefore {
		b.WriteString(`"id":"` + id(in) + `","input":` + input(in, in.ShardsAfter) + `,"output":` + input(in, in.ShardsAfter) + `,`)
	} else {
		b.WriteString(`"input":` + input(in, in.ShardsAfter) + `,`)
	}
	b.WriteString(`"triggers_replace":` + triggers(in, in.ShardsAfter) + `},"sensitive_values":` + sensitive + `}`)
	return true
}

func priorResource(b *bytes.Buffer, in Instance) bool {
	b.WriteString(resourceHead(in) + `,"schema_version":0,"values":` + priorValues(in) + `,"sensitive_values":` + sensitive + `}`)
	return true
}

func writeChange(b *bytes.Buffer, in Instance) {
	b.WriteString(`{"address":"` + quoted(in.Address()) + `","module_address":"` + moduleAddress(in) + `","mode":"managed","type":"terraform_data","name":"stream_group","provider_name":"terraform.io/builtin/terraform","change":`)
	switch {
	case in.Removed:
		b.WriteString(`{"actions":["delete"],"before":` + priorValues(in) + `,"after":null,"after_unknown":{},"before_sensitive":` + sensitive + `,"after_sensitive":false},"action_reason":"delete_because_no_module"}`)
	case in.ShardsAfter != in.ShardsBefore:
		b.WriteString(`{"actions":["delete","create"],"before":` + priorValues(in) + `,"after":{"input":` + input(in, in.ShardsAfter) + `,"triggers_replace":` + triggers(in, in.ShardsAfter) + `},"after_unknown":{"id":true,"input":{},"output":true,"triggers_replace":[false,false,false,false]},"before_sensitive":` + sensitive + `,"after_sensitive":` + sensitive + `,"replace_paths":[["triggers_replace"]]},"action_reason":"replace_because_cannot_update"}`)
	default:
		b.WriteString(`{"actions":["no-op"],"before":` + priorValues(in) + `,"after":` + priorValues(in) + `,"after_unknown":{},"before_sensitive":` + sensitive + `,"after_sensitive":` + sensitive + `}}`)
	}
}

const sensitive = `{"input":{},"output":{},"triggers_replace":[false,false,false,false]}`

func resourceHead(in Instance) string {
	return `{"address":"` + quoted(in.Address()) + `","mode":"managed","type":"terraform_data","name":"stream_group","provider_name":"terraform.io/builtin/terraform"`
}

func priorValues(in Instance) string {
	return `{"id":"` + id(in) + `","input":` + input(in, in.ShardsBefore) + `,"output":` + input(in, in.ShardsBefore) + `,"triggers_replace":` + triggers(in, in.ShardsBefore) + `}`
}

func input(in Instance, shards int) string {
	return `{"consumer_group":"` + in.ConsumerGroup + `","coordinator_base_url":"` + CoordinatorURL + `","shard_count":` + strconv.Itoa(shards) + `,"stream_prefix":"` + in.StreamPrefix + `"}`
}

func triggers(in Instance, shards int) string {
	return `["` + CoordinatorURL + `","` + in.StreamPrefix + `","` + in.ConsumerGroup + `","` + strconv.Itoa(shards) + `"]`
}

// moduleAddress is the instance's module address, already escaped for a JSON string.
func moduleAddress(in Instance) string {
	return `module.stream_group[\"` + in.Key + `\"]`
}

func quoted(s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte(`"`), []byte(`\"`)))
}

// id is a stable stand-in for the random UUID terraform_data gets at create.
func id(in Instance) string {
	h := fnv.New128a()
	h.Write([]byte(in.Key))
	s := fmt.Sprintf("%x", h.Sum(nil))
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}
