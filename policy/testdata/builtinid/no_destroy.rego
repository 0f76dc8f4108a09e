package shardgate.rules.no_destroy

deny := set()
