package shardgate.rules.team.limits

deny contains {"msg": "nested"} if false
