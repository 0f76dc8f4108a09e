package apply

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/store/records"
)

// Where terraform cannot be confined (and the configuration asks for the
// sandbox), no apply runs it: the job is refused before terraform starts.
func TestNoSandboxNoApply(t *testing.T) {
	a := &Applier{Config: &serverconfig.Config{}, SandboxErr: errors.New("landlock is not available on this kernel")}
	_, err := a.applyJob(t.TempDir(), &records.Plan{}, nil, nil, nil, nil)
	require.ErrorContains(t, err, "not applied: this shardgate server cannot sandbox Terraform (landlock is not available on this kernel)")
}
