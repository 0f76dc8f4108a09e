output "id" {
  value = "${var.stream_prefix}/${var.consumer_group}"
}

output "stream_prefix" {
  value = var.stream_prefix
}

output "consumer_group" {
  value = var.consumer_group
}

output "shard_count" {
  value = var.shard_count
}
