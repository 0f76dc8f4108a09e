package livelog

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/terraform/runner"
)

func TestReplayThenFollowThenEnd(t *testing.T) {
	h := NewHub(4, 1024, nil, nil)
	l := h.Start(Info{ID: "apply-1-1", Kind: KindApply})
	_, _ = l.Write([]byte("first line\nsecond "))
	c := l.Read(0)
	require.Equal(t, []string{"first line"}, c.Lines, "a partial line waits for its end")
	require.False(t, c.Ended)
	select {
	case <-c.Changed:
		t.Fatal("changed before anything was written")
	default:
	}
	_, _ = l.Write([]byte("half\nthird\n"))
	<-c.Changed
	c = l.Read(c.Next)
	require.Equal(t, []string{"second half", "third"}, c.Lines)
	_, _ = l.Write([]byte("no newline at the end"))
	l.Close()
	<-c.Changed
	c = l.Read(c.Next)
	require.Equal(t, []string{"no newline at the end"}, c.Lines)
	require.True(t, c.Ended)
	// A reader arriving late replays everything.
	require.Equal(t, []string{"first line", "second half", "third", "no newline at the end"}, l.Read(0).Lines)
	n, err := l.Write([]byte("after the end\n"))
	require.NoError(t, err)
	require.Equal(t, 14, n)
	require.Len(t, l.Read(0).Lines, 4)
}

func TestBufferKeepsTheNewestWholeLines(t *testing.T) {
	l := NewHub(1, 100, nil, nil).Start(Info{ID: "x"})
	for i := range 50 {
		_, _ = fmt.Fprintf(l, "line %02d\n", i)
	}
	c := l.Read(0)
	require.True(t, c.Skipped)
	require.LessOrEqual(t, len(strings.Join(c.Lines, "\n"))+1, 100)
	require.Equal(t, "line 49", c.Lines[len(c.Lines)-1])
	for _, line := range c.Lines {
		require.Regexp(t, `^line \d\d$`, line)
	}
	// A reader that fell behind is told so and resumes at the oldest kept line.
	c2 := l.Read(8)
	require.True(t, c2.Skipped)
	require.Equal(t, c.Lines, c2.Lines)
	// A line longer than MaxLine is cut rather than held without bound.
	l2 := NewHub(1, 4*MaxLine, nil, nil).Start(Info{ID: "y"})
	_, _ = l2.Write([]byte(strings.Repeat("a", MaxLine+10)))
	require.Len(t, l2.Read(0).Lines, 1)
	require.Len(t, l2.Read(0).Lines[0], MaxLine)
}

func TestHubEvictsTheOldestJobAndEndsIt(t *testing.T) {
	h := NewHub(2, 0, nil, nil)
	a := h.Start(Info{ID: "a"})
	h.Start(Info{ID: "b"})
	h.Start(Info{ID: "c"})
	_, ok := h.Get("a")
	require.False(t, ok)
	require.True(t, a.Read(0).Ended, "an evicted log's readers stop following it")
	_, ok = h.Get("c")
	require.True(t, ok)
	require.Equal(t, "plan-1", h.Start(Info{Kind: KindPlan}).Info().ID)
	require.Equal(t, "plan-2", h.Start(Info{Kind: KindPlan}).Info().ID)
}

func TestServerSecretsAreRedactedBeforeTheyAreKept(t *testing.T) {
	const pw = "coordinator-password-9000"
	l := NewHub(1, 0, redact.New(pw), nil).Start(Info{ID: "a"})
	// Cut in the middle of the secret between writes.
	_, _ = l.Write([]byte("url http://admin:" + pw[:9]))
	_, _ = l.Write([]byte(pw[9:] + "@coord\n"))
	lines := l.Read(0).Lines
	require.Len(t, lines, 1)
	require.NotContains(t, lines[0], pw[:redact.Window])
	require.Contains(t, lines[0], "@coord")
}

func TestRunningJobsAndTheirLockWaits(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	now := clock.Now()
	h := NewHub(4, 0, nil, clock.Now)
	a := h.Start(Info{ID: "a", Started: now.Add(-time.Minute)})
	b := h.Start(Info{ID: "b", Started: now.Add(-2 * time.Minute)})
	a.StateLockWait(&runner.LockWait{Lock: runner.StateLockError{ID: "lock-1", Who: "alice@ops", Operation: "OperationTypeApply"},
		Attempt: 2, Waited: 30 * time.Second})
	b.Close()
	run := h.Running()
	require.Len(t, run, 1)
	require.Equal(t, "a", run[0].Info.ID)
	require.NotNil(t, run[0].LockWait)
	require.Equal(t, "alice@ops", run[0].LockWait.Who)
	require.Equal(t, now.Add(-30*time.Second), run[0].LockWait.Since)
	a.StateLockWait(nil)
	require.Nil(t, h.Running()[0].LockWait)
}
