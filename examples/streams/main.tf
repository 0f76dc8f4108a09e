# Example root configuration: every consumer group of every stream, one module
# instance each. Scaling a stream means changing shard_count of all its groups.
terraform {
  required_version = ">= 1.5.0"
}

variable "coordinator_base_url" {
  type    = string
  default = "http://127.0.0.1:8089"
}

# Under shardgate these get the placeholder "shardgate-broker": the apply's
# coordinator broker adds the real credentials to the calls the review judged
# (docs/operating.md, "The coordinator broker"). Run by hand, pass your own.
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
# Optional since the coordinator broker sets requestedBy, reason and
# X-Request-Id on every mutation itself; kept for runs outside shardgate.
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

variable "groups" {
  description = "Consumer groups keyed by \"<stream_prefix>/<consumer_group>\"."
  type = map(object({
    stream_prefix  = string
    consumer_group = string
    shard_count    = number
  }))
  default = {
    "create-order/billing" = { stream_prefix = "create-order", consumer_group = "billing", shard_count = 4 }
    "create-order/audit"   = { stream_prefix = "create-order", consumer_group = "audit", shard_count = 4 }
    "payments/ledger"      = { stream_prefix = "payments", consumer_group = "ledger", shard_count = 2 }
  }
}

module "stream_group" {
  source   = "../modules/stream-group"
  for_each = var.groups

  coordinator_base_url = var.coordinator_base_url
  coordinator_username = var.coordinator_username
  coordinator_password = var.coordinator_password
  stream_prefix        = each.value.stream_prefix
  consumer_group       = each.value.consumer_group
  shard_count          = each.value.shard_count
  requested_by         = var.shardgate_requested_by
  reason               = var.shardgate_reason
  request_id_prefix    = var.shardgate_request_id_prefix
}
