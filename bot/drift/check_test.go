package drift

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
)

func TestCheck(t *testing.T) {
	noop := module("module.orders.terraform_data.stream_group", "orders", "billing", planparse.ActionNoop, ip(4), ip(4))
	other := planparse.OtherChange{Address: "aws_s3_bucket.logs", Type: "aws_s3_bucket", Actions: []string{"create"}}
	tests := []struct {
		name    string
		cs      *planparse.ChangeSet
		coord   policy.Coordinator
		live    map[string]policy.LiveStream
		status  Status
		groups  []Group
		pending int
	}{
		{name: "scaled by hand", cs: &planparse.ChangeSet{Changes: []planparse.Change{noop}}, coord: reached,
			live: liveOf("orders", map[string]int{"billing": 7}), status: StatusDrifted,
			groups: []Group{{Address: noop.Address, StreamPrefix: "orders", ConsumerGroup: "billing", Coordinator: coordURL, Desired: 4, Live: ip(7), Delta: 3}}},
		{name: "as the code says", cs: &planparse.ChangeSet{Changes: []planparse.Change{noop}}, coord: reached,
			live: liveOf("orders", map[string]int{"billing": 4}), status: StatusClean, groups: []Group{}},
		{name: "group gone from the coordinator", cs: &planparse.ChangeSet{Changes: []planparse.Change{noop}}, coord: reached,
			live: liveOf("orders", map[string]int{"other": 4}), status: StatusDrifted,
			groups: []Group{{Address: noop.Address, StreamPrefix: "orders", ConsumerGroup: "billing", Coordinator: coordURL, Desired: 4, Delta: -4}}},
		{name: "code not applied yet", cs: &planparse.ChangeSet{Changes: []planparse.Change{
			module("module.orders.terraform_data.stream_group", "orders", "billing", planparse.ActionScale, ip(4), ip(6))}}, coord: reached,
			live: liveOf("orders", map[string]int{"billing": 4}), status: StatusDrifted, groups: []Group{}, pending: 1},
		{name: "another resource would change", cs: &planparse.ChangeSet{Changes: []planparse.Change{noop}, OtherChanges: []planparse.OtherChange{other}},
			coord: reached, live: liveOf("orders", map[string]int{"billing": 4}), status: StatusDrifted, groups: []Group{}, pending: 1},
		{name: "no coordinator group at all", cs: &planparse.ChangeSet{OtherChanges: []planparse.OtherChange{other}},
			status: StatusClean, groups: []Group{}, pending: 1},
		{name: "coordinator unreachable", cs: &planparse.ChangeSet{Changes: []planparse.Change{noop}},
			coord: policy.Coordinator{Consulted: true, Error: "dial tcp: refused"}, status: StatusError, groups: []Group{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Check(tt.cs, tt.coord, tt.live)
			require.Equal(t, tt.status, res.Status, res.Error)
			require.Equal(t, tt.groups, res.Groups)
			require.Len(t, res.Pending, tt.pending)
			if tt.status == StatusError {
				require.Contains(t, res.Error, "could not be read")
			}
		})
	}
}

func TestCheckHidesSensitiveNames(t *testing.T) {
	c := module("module.secret.terraform_data.stream_group", "tenant-secret", "billing", planparse.ActionNoop, ip(4), ip(4))
	c.Sensitive = []string{planparse.FieldStreamPrefix}
	res := Check(&planparse.ChangeSet{Changes: []planparse.Change{c}}, reached, liveOf("tenant-secret", map[string]int{"billing": 9}))
	require.Equal(t, StatusDrifted, res.Status)
	require.Equal(t, report.Sensitive, res.Groups[0].StreamPrefix)
	require.NotContains(t, Body(record(res, nil, 0), res), "tenant-secret")
}
