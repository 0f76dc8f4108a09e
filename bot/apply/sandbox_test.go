package apply

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/store/records"
)

// Where terraform cannot be confined (and the configuration asks for the
// sandbox), no apply runs it: the job is refused before terraform starts.
func TestNoSandboxNoApply(t *testing.T) {
	a := &Applier{Config: &serverconfig.Config{}, SandboxErr: errors.New("landlock is not available on this kernel")}
	_, err := a.applyJob(pullreq.Ref{Owner: "acme", Repo: "streams"}, t.TempDir(), &records.Plan{Project: "streams"}, nil, nil, nil, nil)
	require.ErrorContains(t, err, "not applied: this shardgate server cannot sandbox Terraform (landlock is not available on this kernel)")
}
