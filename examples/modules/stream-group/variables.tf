variable "coordinator_base_url" {
  description = "Base URL of the coordinator, e.g. http://127.0.0.1:8089 (the module appends /coord/v1)."
  type        = string
}

variable "stream_prefix" {
  description = "Stream prefix: shard keys are {prefix}:{index}."
  type        = string
}

variable "consumer_group" {
  description = "Consumer group name under the stream prefix."
  type        = string
}

variable "shard_count" {
  description = "Target shard count for the whole stream (scale is stream-wide)."
  type        = number

  validation {
    condition     = var.shard_count >= 1
    error_message = "shard_count must be at least 1."
  }
}

# The variables below are deliberately not part of input or triggers_replace:
# changing them produces no plan diff and no run (coordinator.md §5).

variable "coordinator_username" {
  description = "Basic-auth user with the WRITE role. Empty sends no credentials."
  type        = string
  default     = ""
}

variable "coordinator_password" {
  description = "Password of coordinator_username."
  type        = string
  default     = ""
  sensitive   = true
}

variable "requested_by" {
  description = "requestedBy sent with every mutation (shows in the coordinator's audit)."
  type        = string
  default     = "terraform"
}

variable "reason" {
  description = "reason sent with every mutation."
  type        = string
  default     = "terraform apply"
}

variable "request_id_prefix" {
  description = "Prefix of the X-Request-Id sent with every call."
  type        = string
  default     = "terraform"
}

variable "timeout_seconds" {
  description = "How long apply waits for producer routing to show the target count."
  type        = number
  default     = 120
}

variable "poll_interval_seconds" {
  description = "Seconds between producer-routing polls."
  type        = number
  default     = 2
}
