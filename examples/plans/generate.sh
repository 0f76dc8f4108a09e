#!/usr/bin/env bash
# Regenerates the example plans in this folder with the real terraform and the
# coordinator simulator: applies examples/streams as it is (the "before" state),
# then plans each scenario below and saves `terraform show -json` of it.
#   usage: examples/plans/generate.sh   (from the repository root; needs make tools)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tf=${SHARDGATE_TERRAFORM:-$root/bin/terraform}
port=${COORDSIM_PORT:-18089}
url="http://127.0.0.1:$port"
work=$(mktemp -d)
trap 'kill $sim 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/shardgate" "$root/cmd/shardgate"
"$work/shardgate" coordsim --listen "127.0.0.1:$port" --tick 100ms >"$work/sim.log" 2>&1 &
sim=$!
for _ in $(seq 1 50); do curl -fsS -u admin:password "$url/coord/v1/monitoring/health" >/dev/null 2>&1 && break; sleep 0.2; done

cp -r "$root/examples/modules" "$root/examples/streams" "$work/"
cd "$work/streams"
export TF_IN_AUTOMATION=1 TF_INPUT=0 TF_VAR_coordinator_base_url="$url" TF_VAR_coordinator_username=admin TF_VAR_coordinator_password=password
"$tf" init -input=false >/dev/null
"$tf" apply -input=false -auto-approve >/dev/null

scenario() { # name, groups map in HCL
	printf 'groups = %s\n' "$2" >"$work/$1.tfvars"
	# Plans need no coordinator credentials (only apply calls it); leaving them out
	# keeps them out of the plan JSON's variables section.
	env -u TF_VAR_coordinator_username -u TF_VAR_coordinator_password \
		"$tf" plan -input=false -out="$work/$1.tfplan" -var-file="$work/$1.tfvars" >/dev/null
	"$tf" show -json "$work/$1.tfplan" | python3 -m json.tool --indent 1 >"$root/examples/plans/$1.json"
	echo "wrote examples/plans/$1.json"
}

scenario 01-scale-small '{
  "create-order/billing" = { stream_prefix = "create-order", consumer_group = "billing", shard_count = 6 }
  "create-order/audit"   = { stream_prefix = "create-order", consumer_group = "audit", shard_count = 6 }
  "payments/ledger"      = { stream_prefix = "payments", consumer_group = "ledger", shard_count = 2 }
}'
scenario 02-scale-too-far '{
  "create-order/billing" = { stream_prefix = "create-order", consumer_group = "billing", shard_count = 16 }
  "create-order/audit"   = { stream_prefix = "create-order", consumer_group = "audit", shard_count = 16 }
  "payments/ledger"      = { stream_prefix = "payments", consumer_group = "ledger", shard_count = 2 }
}'
scenario 03-new-group '{
  "create-order/billing" = { stream_prefix = "create-order", consumer_group = "billing", shard_count = 4 }
  "create-order/audit"   = { stream_prefix = "create-order", consumer_group = "audit", shard_count = 4 }
  "payments/ledger"      = { stream_prefix = "payments", consumer_group = "ledger", shard_count = 2 }
  "clicks/etl"           = { stream_prefix = "clicks", consumer_group = "etl", shard_count = 3 }
}'
scenario 04-remove-group '{
  "create-order/billing" = { stream_prefix = "create-order", consumer_group = "billing", shard_count = 4 }
  "create-order/audit"   = { stream_prefix = "create-order", consumer_group = "audit", shard_count = 4 }
}'
scenario 05-conflicting-counts '{
  "create-order/billing" = { stream_prefix = "create-order", consumer_group = "billing", shard_count = 6 }
  "create-order/audit"   = { stream_prefix = "create-order", consumer_group = "audit", shard_count = 4 }
  "payments/ledger"      = { stream_prefix = "payments", consumer_group = "ledger", shard_count = 2 }
}'
