# METADATA
# title: Bad label
# custom:
#   waivable: true
#   exception_label: policy-exception/something_else
package shardgate.rules.bad_label

deny contains {"msg": "never"} if false
