package shardgate.lib

current_shards(_) := 1
