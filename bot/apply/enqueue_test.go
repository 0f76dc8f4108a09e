package apply

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// What a merge queues follows the base branch's .shardgate.yaml: an alarm-only
// project on merge, a manual one waits; a file that is not valid applies
// nothing on merge and says why; a GitHub error reading it queues nothing and
// fails the merge event, to be handled again.
func TestEnqueueAppliesFollowsTheBaseBranchApplyModes(t *testing.T) {
	const base = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	alarmsOnly := &planparse.ChangeSet{OtherChanges: []planparse.OtherChange{{Address: "terraform_data.cpu", Type: "terraform_data", Actions: []string{"create"}}}}
	tests := []struct {
		name      string
		config    string // "" for a GitHub error reading it
		wantJobs  []string
		wantWait  []string
		wantWhy   string
		wantError bool
	}{
		{name: "on merge by default", config: "version: 1\nprojects:\n  - {name: alarms, dir: alarms}\n  - {name: idle, dir: idle}\n", wantJobs: []string{"alarms"}},
		{name: "manual waits", config: "version: 1\nprojects:\n  - {name: alarms, dir: alarms, apply: manual}\n",
			wantWait: []string{"alarms"}, wantWhy: "`apply: manual`"},
		{name: "a file that is not valid applies nothing", config: "version: 1\nprojects:\n  - {name: alarms, dir: alarms, apply: sometimes}\n",
			wantWait: []string{"alarms"}, wantWhy: "is not valid"},
		{name: "GitHub failing queues nothing", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"), store.WithoutSync())
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			rec := records.New(st, redact.New())
			q := applyqueue.New(st, "test", 0, clock.Now)
			a := &Applier{Records: rec, Applies: q, Scheduler: applyqueue.NewScheduler(q, nil, logrus.NewEntry(logrus.New()))}
			for _, p := range []*records.Plan{
				{Project: "alarms", Dir: "alarms", Workspace: "default", HeadSHA: firstHead, ChangeSet: alarmsOnly},
				{Project: "idle", Dir: "idle", Workspace: "default", HeadSHA: firstHead, ChangeSet: &planparse.ChangeSet{}},
			} {
				require.NoError(t, rec.PutPlan(ctx, seamRef, p))
			}
			gh := ghapptest.New(clock.Now)
			if tt.config == "" {
				gh.Fail = func(name string) error { return errors.New("GitHub 502") }
			} else {
				gh.SetFile(seamRef.Owner, seamRef.Repo, base, ".shardgate.yaml", []byte(tt.config))
			}
			prs := &records.PRState{Ref: seamRef, HeadSHA: firstHead, Projects: []string{"alarms", "idle"}}
			pr := ghapp.PullRequest{Merged: true, HeadSHA: firstHead, BaseRef: "main", BaseSHA: base, DefaultBranch: "main",
				MergeSHA: pushedHead, MergedBy: "alice"}

			err = a.EnqueueApplies(ctx, gh, prs, pr)
			jobs, lerr := q.ListForPR(ctx, seamRef)
			require.NoError(t, lerr)
			if tt.wantError {
				require.Error(t, err)
				require.Empty(t, jobs)
				return
			}
			require.NoError(t, err)
			var got, waiting []string
			for _, j := range jobs {
				got = append(got, j.Project)
				require.Empty(t, j.Streams)
				require.Equal(t, "acme/streams:alarms@default", j.StateKey)
			}
			for _, w := range prs.Waiting {
				waiting = append(waiting, w.Project)
				require.Contains(t, w.Why, tt.wantWhy)
			}
			require.Equal(t, tt.wantJobs, got, "the project without changes is not applied")
			require.Equal(t, tt.wantWait, waiting)
		})
	}
}
