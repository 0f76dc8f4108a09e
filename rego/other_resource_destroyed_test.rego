package shardgate.rules.other_resource_destroyed_test

import data.shardgate.rules.other_resource_destroyed as destroyed

others := [
	{"address": "aws_s3_bucket.logs", "type": "aws_s3_bucket", "actions": ["delete"], "action_reason": "delete_because_no_resource_config"},
	{"address": "aws_iam_policy.app", "type": "aws_iam_policy", "actions": ["update"], "action_reason": ""},
	{"address": "aws_instance.web", "type": "aws_instance", "actions": ["create", "delete"], "action_reason": "replace_because_cannot_update"},
	{"address": "aws_sqs_queue.q", "type": "aws_sqs_queue", "actions": ["create"], "action_reason": ""},
]

test_destroys_warn if {
	found := destroyed.warn with input as {"other_changes": others}
	found == {
		{"msg": "aws_s3_bucket.logs (aws_s3_bucket) is destroyed", "stream_prefix": "", "consumer_group": "", "address": "aws_s3_bucket.logs"},
		{
			"msg": "aws_instance.web (aws_instance) is replaced: Terraform destroys it and creates it again",
			"stream_prefix": "", "consumer_group": "", "address": "aws_instance.web",
		},
	}
}

test_nothing_destroyed_quiet if {
	count(destroyed.warn) == 0 with input as {"other_changes": [others[1], others[3]]}
	count(destroyed.warn) == 0 with input as {}
}
