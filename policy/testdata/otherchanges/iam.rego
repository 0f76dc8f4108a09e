# The example of docs/policy-input.md ("other_changes"): a user policy denying a
# change shardgate itself only shows.
package shardgate.rules.iam_review

deny contains v if {
	some o in input.other_changes
	o.type == "aws_iam_policy"
	v := {"msg": sprintf("%s changes an IAM policy; ask the security team", [o.address]), "address": o.address}
}
