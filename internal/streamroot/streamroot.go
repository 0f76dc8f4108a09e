// Package streamroot writes the example root configuration that the bot's
// end-to-end tests and `shardgate demo` plan and apply: one stream-group module
// instance per consumer group, a local state shared by every checkout (as a
// remote backend would be), and one coordinator.
package streamroot

import (
	"fmt"
	"sort"
	"strings"
)

// GroupsHCL renders "prefix/group" -> shard count as the module's for_each map,
// in a stable order.
func GroupsHCL(groups map[string]int) string {
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{\n")
	for _, k := range keys {
		prefix, group, _ := strings.Cut(k, "/")
		fmt.Fprintf(&b, "    %q = { stream_prefix = %q, consumer_group = %q, shard_count = %d }\n", k, prefix, group, groups[k])
	}
	b.WriteString("  }")
	return b.String()
}

// MainTF is streams/main.tf for the given state file, coordinator and groups.
// The module comes from ../modules/stream-group; coordinator credentials are
// the sensitive variables shardgate sets for apply.
func MainTF(statePath, coordinatorURL string, groups map[string]int) string {
	return fmt.Sprintf(`terraform {
  backend "local" {
    path = %q
  }
}

variable "coordinator_username" {
  type    = string
  default = ""
}

variable "coordinator_password" {
  type      = string
  default   = ""
  sensitive = true
}

# Set by shardgate on apply (shardgate:<owner>/<repo>#<pr> merged by <login>, the
# merge commit and PR, a request-id prefix per apply job), so every coordinator
# audit entry names the pull request it came from. Defaults are the module's.
variable "shardgate_requested_by" {
  type    = string
  default = "terraform"
}

variable "shardgate_reason" {
  type    = string
  default = "terraform apply"
}

variable "shardgate_request_id_prefix" {
  type    = string
  default = "terraform"
}

module "stream_group" {
  source   = "../modules/stream-group"
  for_each = %s

  coordinator_base_url  = %q
  coordinator_username  = var.coordinator_username
  coordinator_password  = var.coordinator_password
  stream_prefix         = each.value.stream_prefix
  consumer_group        = each.value.consumer_group
  shard_count           = each.value.shard_count
  poll_interval_seconds = 1
  requested_by          = var.shardgate_requested_by
  reason                = var.shardgate_reason
  request_id_prefix     = var.shardgate_request_id_prefix
}
`, statePath, GroupsHCL(groups), coordinatorURL)
}
