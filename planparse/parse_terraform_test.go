package planparse_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

// Real terraform plans of the stream-group module: apply the before config, plan the
// after config, parse `terraform show -json`.
func TestParseTerraformPlans(t *testing.T) {
	type (
		C = planparse.Change
		D = planparse.Desired
	)
	const (
		cannotUpdate = "replace_because_cannot_update"
		noModule     = "delete_because_no_module"
	)
	one := func(key, prefix, grp, shards string) map[string]group {
		return map[string]group{key: {prefix, grp, shards}}
	}
	orders := func(billing, audit string) map[string]group {
		return map[string]group{
			"orders/billing": {"orders", "billing", billing},
			"orders/audit":   {"orders", "audit", audit},
		}
	}
	tests := []struct {
		name          string
		before, after string
		taint         []string
		fixture       string // saved to testdata/ with -update
		want          []C
		wantDesired   []D
		wantResources int
		wantOther     []planparse.OtherChange // fingerprints left out
	}{
		{
			name:          "create",
			after:         streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			want:          []C{moduleChange("orders/billing", planparse.ActionCreate, "orders", "billing", nil, ptr(4), "", "create")},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 4)},
			wantResources: 1,
		},
		{
			name:   "small scale up",
			before: streamRoot(orders("4", "4"), ""),
			after:  streamRoot(orders("6", "6"), ""),
			want: []C{
				moduleChange("orders/audit", planparse.ActionScale, "orders", "audit", ptr(4), ptr(6), cannotUpdate, "delete", "create"),
				moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", ptr(4), ptr(6), cannotUpdate, "delete", "create"),
			},
			wantDesired:   []D{desired("orders/audit", "orders", "audit", 6), desired("orders/billing", "orders", "billing", 6)},
			wantResources: 2,
		},
		{
			name:          "large scale up",
			before:        streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			after:         streamRoot(one("orders/billing", "orders", "billing", "16"), ""),
			want:          []C{moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", ptr(4), ptr(16), cannotUpdate, "delete", "create")},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 16)},
			wantResources: 1,
		},
		{
			name:          "scale down",
			before:        streamRoot(one("orders/billing", "orders", "billing", "8"), ""),
			after:         streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			want:          []C{moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", ptr(8), ptr(4), cannotUpdate, "delete", "create")},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 4)},
			wantResources: 1,
		},
		{
			name:   "removal",
			before: streamRoot(orders("4", "4"), ""),
			after:  streamRoot(one("orders/audit", "orders", "audit", "4"), ""),
			want: []C{
				moduleChange("orders/audit", planparse.ActionNoop, "orders", "audit", ptr(4), ptr(4), "", "no-op"),
				moduleChange("orders/billing", planparse.ActionUnmanage, "orders", "billing", ptr(4), nil, noModule, "delete"),
			},
			wantDesired:   []D{desired("orders/audit", "orders", "audit", 4)},
			wantResources: 1,
		},
		{
			name:   "rename",
			before: streamRoot(one("billing", "orders", "billing", "4"), ""),
			after:  streamRoot(one("billing", "orders-v2", "billing", "4"), ""),
			want: []C{
				moduleChange("billing", planparse.ActionCreate, "orders-v2", "billing", nil, ptr(4), cannotUpdate, "delete", "create"),
				moduleChange("billing", planparse.ActionUnmanage, "orders", "billing", ptr(4), nil, cannotUpdate, "delete", "create"),
			},
			wantDesired:   []D{desired("billing", "orders-v2", "billing", 4)},
			wantResources: 1,
		},
		{
			name:   "two instances of one prefix disagree",
			before: streamRoot(orders("4", "4"), ""),
			after:  streamRoot(orders("8", "4"), ""),
			want: []C{
				moduleChange("orders/audit", planparse.ActionNoop, "orders", "audit", ptr(4), ptr(4), "", "no-op"),
				moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", ptr(4), ptr(8), cannotUpdate, "delete", "create"),
			},
			wantDesired:   []D{desired("orders/audit", "orders", "audit", 4), desired("orders/billing", "orders", "billing", 8)},
			wantResources: 1,
		},
		{
			name:   "unknown shard count",
			before: streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			// terraform_data.count is created by this plan, so its output is unknown.
			after:   streamRoot(one("orders/billing", "orders", "billing", "terraform_data.count.output"), `resource "terraform_data" "count" { input = 6 }`),
			fixture: "module_unknown_shard_count.json",
			want: []C{func() C {
				c := moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", ptr(4), nil, cannotUpdate, "delete", "create")
				c.Unknown = []string{planparse.FieldShardCount}
				return c
			}()},
			wantResources: 1,
			wantOther:     []planparse.OtherChange{{Address: "terraform_data.count", Type: "terraform_data", Actions: []string{"create"}}},
		},
		{
			name:   "unrelated resources only",
			before: streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			// A terraform_data named stream_group outside the module, of another shape.
			after: streamRoot(one("orders/billing", "orders", "billing", "4"),
				`resource "terraform_data" "other" { input = "x" }
resource "terraform_data" "stream_group" { input = { stream_prefix = "orders" } }`),
			want:        []C{moduleChange("orders/billing", planparse.ActionNoop, "orders", "billing", ptr(4), ptr(4), "", "no-op")},
			wantDesired: []D{desired("orders/billing", "orders", "billing", 4)},
			wantOther: []planparse.OtherChange{
				{Address: "terraform_data.other", Type: "terraform_data", Actions: []string{"create"}},
				{Address: "terraform_data.stream_group", Type: "terraform_data", Actions: []string{"create"}},
			},
		},
		{
			name: "several changes at once",
			before: streamRoot(map[string]group{
				"orders/billing":  {"orders", "billing", "4"},
				"orders/audit":    {"orders", "audit", "4"},
				"payments/ledger": {"payments", "ledger", "2"},
				"refunds/ledger":  {"refunds", "ledger", "3"},
			}, ""),
			after: streamRoot(map[string]group{
				"orders/billing": {"orders", "billing", "6"},
				"orders/audit":   {"orders", "audit", "6"},
				"refunds/ledger": {"refunds", "ledger", "3"},
				"users/audit":    {"users", "audit", "2"},
			}, ""),
			fixture: "module_several_changes.json",
			want: []C{
				moduleChange("orders/audit", planparse.ActionScale, "orders", "audit", ptr(4), ptr(6), cannotUpdate, "delete", "create"),
				moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", ptr(4), ptr(6), cannotUpdate, "delete", "create"),
				moduleChange("payments/ledger", planparse.ActionUnmanage, "payments", "ledger", ptr(2), nil, noModule, "delete"),
				moduleChange("refunds/ledger", planparse.ActionNoop, "refunds", "ledger", ptr(3), ptr(3), "", "no-op"),
				moduleChange("users/audit", planparse.ActionCreate, "users", "audit", nil, ptr(2), "", "create"),
			},
			wantDesired: []D{
				desired("orders/audit", "orders", "audit", 6),
				desired("orders/billing", "orders", "billing", 6),
				desired("refunds/ledger", "refunds", "ledger", 3),
				desired("users/audit", "users", "audit", 2),
			},
			wantResources: 4,
		},
		{
			name:   "tainted replace",
			before: streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			taint:  []string{addr("orders/billing")},
			after:  streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			// The retry of a failed apply scales from a count the plan cannot know.
			want: []C{func() C {
				c := moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", nil, ptr(4), "replace_because_tainted", "delete", "create")
				c.PriorShards, c.Tainted = ptr(4), true
				return c
			}()},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 4)},
			wantResources: 1,
		},
		{
			name:   "module moved without a moved block",
			before: streamRoot(one("billing", "orders", "billing", "4"), ""),
			after:  streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			want: []C{func() C {
				c := moduleChange("orders/billing", planparse.ActionMove, "orders", "billing", ptr(4), ptr(4), "", "create")
				c.MovedFrom = addr("billing")
				return c
			}()},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 4)},
			wantResources: 2,
		},
		{
			name:   "module moved and scaled",
			before: streamRoot(one("billing", "orders", "billing", "4"), ""),
			after:  streamRoot(one("orders/billing", "orders", "billing", "6"), ""),
			want: []C{func() C {
				c := moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", ptr(4), ptr(6), "", "create")
				c.MovedFrom = addr("billing")
				return c
			}()},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 6)},
			wantResources: 2,
		},
		{
			// The failed instance's count is no count to move from: a scale the
			// attestation and live state must judge.
			name:   "tainted module moved without a moved block",
			before: streamRoot(one("billing", "orders", "billing", "5"), ""),
			taint:  []string{addr("billing")},
			after:  streamRoot(one("orders/billing", "orders", "billing", "5"), ""),
			want: []C{func() C {
				c := moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", nil, ptr(5), "", "create")
				c.MovedFrom, c.PriorShards, c.Tainted = addr("billing"), ptr(5), true
				return c
			}()},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 5)},
			wantResources: 2,
		},
		{
			name:   "module moved with a moved block",
			before: streamRoot(one("billing", "orders", "billing", "4"), ""),
			after: streamRoot(one("orders/billing", "orders", "billing", "4"),
				`moved {
  from = module.stream_group["billing"]
  to   = module.stream_group["orders/billing"]
}
`),
			want: []C{func() C {
				c := moduleChange("orders/billing", planparse.ActionNoop, "orders", "billing", ptr(4), ptr(4), "", "no-op")
				c.MovedFrom = addr("billing")
				return c
			}()},
			wantDesired: []D{desired("orders/billing", "orders", "billing", 4)},
		},
		{
			name:   "coordinator URL with a trailing slash",
			before: streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			after:  streamRootAt(coordURL+"/", one("orders/billing", "orders", "billing", "4"), ""),
			want: []C{func() C {
				c := moduleChange("orders/billing", planparse.ActionUpdate, "orders", "billing", ptr(4), ptr(4), cannotUpdate, "delete", "create")
				c.CoordinatorURL = coordURL + "/"
				return c
			}()},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 4)},
			wantResources: 1,
		},
		{
			name:   "fractional count",
			before: streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			after:  streamRoot(one("orders/billing", "orders", "billing", "4.5"), ""),
			want: []C{func() C {
				c := moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", ptr(4), nil, cannotUpdate, "delete", "create")
				c.InvalidShardCount = "4.5"
				return c
			}()},
			wantResources: 1,
		},
		{
			name:   "tainted, then another count",
			before: streamRoot(one("orders/billing", "orders", "billing", "4"), ""),
			taint:  []string{addr("orders/billing")},
			after:  streamRoot(one("orders/billing", "orders", "billing", "6"), ""),
			want: []C{func() C {
				c := moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", nil, ptr(6), "replace_because_tainted", "delete", "create")
				c.PriorShards, c.Tainted = ptr(4), true
				return c
			}()},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 6)},
			wantResources: 1,
		},
		{
			name:          "another resource destroyed alongside a scale",
			before:        streamRoot(one("orders/billing", "orders", "billing", "4"), `resource "terraform_data" "bucket" { input = "logs" }`),
			after:         streamRoot(one("orders/billing", "orders", "billing", "6"), ""),
			want:          []C{moduleChange("orders/billing", planparse.ActionScale, "orders", "billing", ptr(4), ptr(6), cannotUpdate, "delete", "create")},
			wantDesired:   []D{desired("orders/billing", "orders", "billing", 6)},
			wantResources: 1,
			wantOther: []planparse.OtherChange{{Address: "terraform_data.bucket", Type: "terraform_data", Actions: []string{"delete"},
				ActionReason: "delete_because_no_resource_config"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := newTFDir(t)
			if tt.before != "" {
				d.apply(tt.before)
			}
			for _, a := range tt.taint {
				d.run("taint", "-no-color", a)
			}
			raw := d.plan(tt.after)
			if tt.fixture != "" && *update {
				require.NoError(t, os.WriteFile(filepath.Join("testdata", tt.fixture), raw, 0o644))
			}
			cs, err := planparse.ParseBytes(raw)
			require.NoError(t, err)
			require.Equal(t, tt.want, cs.Changes)
			require.Equal(t, tt.wantDesired, nilIfEmpty(cs.Desired))
			require.Len(t, cs.Resources, tt.wantResources)
			for i := range cs.OtherChanges {
				require.Regexp(t, hexSHA256, cs.OtherChanges[i].Fingerprint)
				cs.OtherChanges[i].Fingerprint = ""
			}
			require.Equal(t, tt.wantOther, nilIfEmpty(cs.OtherChanges))
			out, err := json.Marshal(cs)
			require.NoError(t, err)
			require.NotContains(t, string(out), "s3cret", "a sensitive variable leaked")
		})
	}
}

// Nested modules and count: the stream-group module two levels down, indexed.
func TestParseTerraformNestedCount(t *testing.T) {
	t.Parallel()
	d := newTFDir(t)
	team := filepath.Join(d.dir, "modules", "team")
	require.NoError(t, os.MkdirAll(team, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(team, "main.tf"), []byte(`
variable "shards" { type = list(number) }
module "sg" {
  source               = "../stream-group"
  count                = length(var.shards)
  coordinator_base_url = "`+coordURL+`"
  stream_prefix        = "team"
  consumer_group       = "g${count.index}"
  shard_count          = var.shards[count.index]
}
`), 0o644))
	root := func(shards string) string {
		return `module "team" {
  source   = "./modules/team"
  for_each = toset(["a"])
  shards   = ` + shards + `
}
`
	}
	d.apply(root("[4, 4]"))
	cs, err := planparse.ParseBytes(d.plan(root("[6]")))
	require.NoError(t, err)
	at := func(i string) string { return `module.team["a"].module.sg[` + i + `].terraform_data.stream_group` }
	require.Equal(t, []planparse.Change{
		{Address: at("0"), Kind: planparse.KindModule, StreamPrefix: "team", ConsumerGroup: "g0", CoordinatorURL: coordURL,
			Coordinator: coordURL, Stream: coordURL + " team",
			Action: planparse.ActionScale, ShardsBefore: ptr(4), ShardsAfter: ptr(6), PriorShards: ptr(4),
			ActionReason: "replace_because_cannot_update", TerraformActions: []string{"delete", "create"}},
		{Address: at("1"), Kind: planparse.KindModule, StreamPrefix: "team", ConsumerGroup: "g1", CoordinatorURL: coordURL,
			Coordinator: coordURL, Stream: coordURL + " team",
			Action: planparse.ActionUnmanage, ShardsBefore: ptr(4), PriorShards: ptr(4),
			ActionReason: "delete_because_no_module", TerraformActions: []string{"delete"}},
	}, cs.Changes)
	require.Equal(t, []planparse.Desired{{Address: at("0"), StreamPrefix: "team", ConsumerGroup: "g0", Coordinator: coordURL,
		Stream: coordURL + " team", ShardCount: 6}}, cs.Desired)
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
