package traceability

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/pullreq"
)

func TestTraceEnv(t *testing.T) {
	ref := pullreq.Ref{Owner: "acme", Repo: "infra", Number: 42}
	dir := t.TempDir()
	require.Empty(t, Env(dir, ref, "0123456789abcdef", "alice", "7"), "never a -var the root does not declare")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`variable "shardgate_requested_by" {}
variable "shardgate_reason" {}
variable "shardgate_request_id_prefix" {}
`), 0o644))
	env := Env(dir, ref, "0123456789abcdef", "alice", "00000000000000000007")
	require.Equal(t, "shardgate:acme/infra#42 merged by alice", env["TF_VAR_shardgate_requested_by"])
	require.Equal(t, "apply 0123456 of acme/infra#42", env["TF_VAR_shardgate_reason"])
	require.Equal(t, "shardgate-infra-pr42-7", env["TF_VAR_shardgate_request_id_prefix"])
	require.Equal(t, "shardgate-a-b-pr1-0", RequestIDPrefix(pullreq.Ref{Repo: "a b", Number: 1}, "000"))
}

func TestMissingTraceVars(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, vars, Missing(dir))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vars.tf"), []byte(`variable "shardgate_requested_by" {
  type    = string
  default = ""
}
# variable "shardgate_reason" {} is only a comment here, not a declaration
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "more.tf.json"), []byte(`{"variable": {"shardgate_request_id_prefix": {"type": "string"}}}`), 0o644))
	require.Equal(t, []string{VarReason}, Missing(dir))
}
