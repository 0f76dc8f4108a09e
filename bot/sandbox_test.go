package bot

import (
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Where a job's processes cannot be ended, the start-up log warns and names
// what is not enforced and why; where they are, it says how.
func TestStartupLogSaysHowAJobsProcessesEnd(t *testing.T) {
	cfg := &serverconfig.Config{Sandbox: serverconfig.SandboxLandlock}
	for _, tt := range []struct {
		procs runner.Containment
		level logrus.Level
		want  []string
	}{
		{runner.Containment{Mechanism: runner.ContainNone, Reason: "no cgroup v2 hierarchy is mounted; nor can it make a PID namespace: operation not permitted"},
			logrus.WarnLevel, []string{"NOT ENFORCED", "may outlive their job", "no cgroup v2 hierarchy is mounted", "PID namespace: operation not permitted"}},
		{runner.Containment{Mechanism: runner.ContainPIDNamespace, Reason: "no cgroup v2 hierarchy is mounted"},
			logrus.InfoLevel, []string{"a PID namespace per terraform command", "killed when it exits"}},
		{runner.Containment{Mechanism: runner.ContainCgroup, Parent: "/sys/fs/cgroup/shardgate.service"},
			logrus.InfoLevel, []string{"a cgroup v2 per job under /sys/fs/cgroup/shardgate.service", "cgroup.kill"}},
	} {
		log, hook := test.NewNullLogger()
		logSandbox(logrus.NewEntry(log), cfg, nil, tt.procs)
		var said *logrus.Entry
		for _, e := range hook.AllEntries() {
			if e.Data["process_containment"] == tt.procs.Mechanism {
				said = e
			}
		}
		require.NotNil(t, said, "the start-up log names the containment %s", tt.procs.Mechanism)
		require.Equal(t, tt.level, said.Level)
		for _, w := range tt.want {
			require.Contains(t, said.Message, w)
		}
	}
}
