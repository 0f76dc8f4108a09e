# METADATA
# title: Incomplete plan
# description: >-
#   Warns when Terraform marked the plan incomplete ("complete": false, deferred
#   changes): shardgate judges what this plan holds, and the changes Terraform
#   deferred follow in a later plan, judged on their own.
# custom:
#   waivable: false
package shardgate.rules.incomplete_plan

warn contains v if {
	input.incomplete == true
	v := {
		"msg": "Terraform deferred some changes (the plan is not complete): this judgement covers only the changes shown; more changes follow in a later plan, which is judged when it is made",
		"stream_prefix": "",
		"consumer_group": "",
		"address": "",
	}
}
