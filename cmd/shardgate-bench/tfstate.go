package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// The applied root's state, written rather than applied (issue 37): terraform
// 1.5.7 applies 10,000 module instances in well over ten minutes, one
// local-exec each, and all an apply leaves behind for the plan is
// terraform.tfstate. writeState writes the state that apply leaves: format 4,
// terraform_data's attributes (a random id, input and output equal, and
// triggers_replace) as the example module sets them, the resources in
// terraform's order. TestWrittenStateIsTheAppliedState compares it with the
// state of a real apply; the plan that follows is terraform's own.

// exampleCoordinatorURL is examples/streams's coordinator_base_url default: the
// bench passes none, so every instance's input carries it.
const exampleCoordinatorURL = "http://127.0.0.1:8089"

const builtinProvider = `provider["terraform.io/builtin/terraform"]`

type stateV4 struct {
	Version          int             `json:"version"`
	TerraformVersion string          `json:"terraform_version"`
	Serial           int             `json:"serial"`
	Lineage          string          `json:"lineage"`
	Outputs          struct{}        `json:"outputs"`
	Resources        []stateResource `json:"resources"`
	CheckResults     any             `json:"check_results"`
}

type stateResource struct {
	Module    string          `json:"module,omitempty"`
	Mode      string          `json:"mode"`
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Provider  string          `json:"provider"`
	Instances []stateInstance `json:"instances"`
}

type stateInstance struct {
	SchemaVersion       int       `json:"schema_version"`
	Attributes          dataAttrs `json:"attributes"`
	SensitiveAttributes []string  `json:"sensitive_attributes"`
	Dependencies        []string  `json:"dependencies,omitempty"`
}

// dataAttrs are terraform_data's attributes; input, output and triggers_replace
// are dynamic values, stored with their type.
type dataAttrs struct {
	ID              string  `json:"id"`
	Input           dynamic `json:"input"`
	Output          dynamic `json:"output"`
	TriggersReplace any     `json:"triggers_replace"` // *dynamic or nil
}

type dynamic struct {
	Value any `json:"value"`
	Type  any `json:"type"`
}

// groupInput is the module's input object (its keys in the order terraform
// writes an object's attributes: by name).
type groupInput struct {
	ConsumerGroup      string `json:"consumer_group"`
	CoordinatorBaseURL string `json:"coordinator_base_url"`
	ShardCount         int    `json:"shard_count"`
	StreamPrefix       string `json:"stream_prefix"`
}

var groupInputType = []any{"object", map[string]string{
	"consumer_group": "string", "coordinator_base_url": "string", "shard_count": "number", "stream_prefix": "string",
}}

// appliedState is the state `terraform apply` leaves for the root of a shape
// with the instances' "before" shard counts.
func appliedState(ins []planparsetest.Instance, shape string) (stateV4, error) {
	s := stateV4{Version: 4, TerraformVersion: planparsetest.TerraformVersion, Serial: 1}
	var err error
	if s.Lineage, err = uuid(); err != nil {
		return s, err
	}
	var deps []string
	if shape == soloPrefix {
		id, err := uuid()
		if err != nil {
			return s, err
		}
		url := dynamic{Value: exampleCoordinatorURL, Type: "string"}
		s.Resources = append(s.Resources, stateResource{
			Mode: "managed", Type: "terraform_data", Name: "coordinator", Provider: builtinProvider,
			Instances: []stateInstance{{Attributes: dataAttrs{ID: id, Input: url, Output: url}, SensitiveAttributes: []string{}}},
		})
		deps = []string{"terraform_data.coordinator"}
	}
	groups := make([]stateResource, 0, len(ins))
	for _, in := range ins {
		id, err := uuid()
		if err != nil {
			return s, err
		}
		input := dynamic{Value: groupInput{in.ConsumerGroup, exampleCoordinatorURL, in.ShardsBefore, in.StreamPrefix}, Type: groupInputType}
		triggers := &dynamic{
			Value: []string{exampleCoordinatorURL, in.StreamPrefix, in.ConsumerGroup, strconv.Itoa(in.ShardsBefore)},
			Type:  []any{"tuple", []string{"string", "string", "string", "string"}},
		}
		groups = append(groups, stateResource{
			Module: `module.stream_group["` + in.Key + `"]`, Mode: "managed", Type: "terraform_data", Name: "stream_group", Provider: builtinProvider,
			Instances: []stateInstance{{
				Attributes:          dataAttrs{ID: id, Input: input, Output: input, TriggersReplace: triggers},
				SensitiveAttributes: []string{},
				Dependencies:        deps,
			}},
		})
	}
	// terraform sorts a state's resources by module address, then mode, type
	// and name; the root module's ("") come first.
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].Module < groups[j].Module })
	s.Resources = append(s.Resources, groups...)
	return s, nil
}

// writeState writes the applied state into the root as terraform.tfstate.
func (r realRoot) writeState(ins []planparsetest.Instance) error {
	s, err := appliedState(ins, r.shape)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the state: %w", err)
	}
	return writeAtomic(filepath.Join(r.dir, "terraform.tfstate"), append(b, '\n'))
}

// uuid is 16 random bytes in a UUID's form, as hashicorp/go-uuid makes
// terraform_data's ids and state lineages.
func uuid() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
