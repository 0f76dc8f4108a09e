package plan

import "github.com/shardgate/shardgate/bot/server/serverconfig"

// sandboxRefusedStatus is the PR status when the sandbox is required and
// missing.
func sandboxRefusedStatus(refusal error) string {
	return "not planned: this shardgate server cannot sandbox Terraform (" + refusal.Error() +
		"), and it does not run pull-request code unconfined. Its operator can run shardgate on Linux 6.2 or later " +
		"with Landlock enabled, or set `terraform.sandbox: none` to plan without a sandbox."
}

// SandboxNotice is the line every comment carries when plans run without a
// sandbox (terraform.sandbox: none); empty otherwise.
func (s *Planner) SandboxNotice() string {
	if s.Config.Sandbox != serverconfig.SandboxNone {
		return ""
	}
	return "⚠️ **Plans run unsandboxed** on this shardgate server (`terraform.sandbox: none`): " +
		"a pull request's Terraform code runs with the server's own access to its files."
}
